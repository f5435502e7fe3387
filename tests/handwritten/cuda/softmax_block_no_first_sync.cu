// kernelrace-args: --block-dim 128
// verdict: race
// race: red line 11: every thread reads the four warp maxima without waiting for the warps to write them
__global__ void softmax_block(const float *x, float *y, int cols) {
    __shared__ float red[4];
    int row = blockIdx.x, tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    float m = -1e30f;
    for (int c = tid; c < cols; c += 128) m = fmaxf(m, x[row * cols + c]);
    for (int o = 16; o > 0; o >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffff, m, o));
    if (lane == 0) red[warp] = m;
    m = fmaxf(fmaxf(red[0], red[1]), fmaxf(red[2], red[3]));   // BUG
    __syncthreads();
    float s = 0.0f;
    for (int c = tid; c < cols; c += 128) s += __expf(x[row * cols + c] - m);
    for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffff, s, o);
    if (lane == 0) red[warp] = s;
    __syncthreads();
    s = red[0] + red[1] + red[2] + red[3];
    for (int c = tid; c < cols; c += 128) y[row * cols + c] = __expf(x[row * cols + c] - m) / s;
}
