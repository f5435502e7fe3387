// kernelrace-args: --block-dim 32
// verdict: clean
// Layer norm with one warp per row and no shared memory: everything is reduced with shuffles.
__device__ float warp_allreduce(float v) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffff, v, o);
    return v;
}
__global__ void layernorm_warp(const float *x, float *y, int cols) {
    int row = blockIdx.x;
    float s = 0.0f;
    for (int c = threadIdx.x; c < cols; c += 32) s += x[row * cols + c];
    float mean = warp_allreduce(s) / cols;
    float q = 0.0f;
    for (int c = threadIdx.x; c < cols; c += 32) { float d = x[row * cols + c] - mean; q += d * d; }
    float rstd = rsqrtf(warp_allreduce(q) / cols + 1e-5f);
    for (int c = threadIdx.x; c < cols; c += 32) y[row * cols + c] = (x[row * cols + c] - mean) * rstd;
}
