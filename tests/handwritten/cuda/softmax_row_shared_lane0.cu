// kernelrace-args: --block-dim 64
// verdict: race
// race: stats line 11: lane 0 of each warp publishes its row's max in one shared slot for the block, so the two warps' rows overwrite each other
__global__ void softmax_rows(const float *x, float *y) {
    __shared__ float stats;
    int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    int row = blockIdx.x * 2 + warp;
    float v = x[row * 32 + lane];
    float m = v;
    for (int o = 16; o > 0; o >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffff, m, o));
    if (lane == 0) stats = m;   // BUG
    __syncwarp();
    y[row * 32 + lane] = __expf(v - stats);
}
