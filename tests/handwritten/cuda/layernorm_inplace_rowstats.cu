// kernelrace-args: --block-dim 32
// verdict: race
// race: stats line 12: per-row statistics are stored at stats[row / 2]: two rows (blocks) share one slot
__global__ void row_stats(const float *x, float2 *stats, int cols) {
    int row = blockIdx.x;
    float s = 0.0f, q = 0.0f;
    for (int c = threadIdx.x; c < cols; c += 32) { float v = x[row * cols + c]; s += v; q += v * v; }
    for (int o = 16; o > 0; o >>= 1) {
        s += __shfl_xor_sync(0xffffffff, s, o);
        q += __shfl_xor_sync(0xffffffff, q, o);
    }
    if (threadIdx.x == 0) stats[row / 2] = make_float2(s / cols, q / cols);   // BUG
}
