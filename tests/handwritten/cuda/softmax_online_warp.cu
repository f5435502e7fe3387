// kernelrace-args: --block-dim 64
// verdict: clean
// Online softmax (running max and rescaled sum) per row; two rows per 64-thread block, one warp each.
__global__ void softmax_online(const float *x, float *y, int cols) {
    int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    int row = blockIdx.x * 2 + warp;
    float m = -1e30f, d = 0.0f;
    for (int c = lane; c < cols; c += 32) {
        float v = x[row * cols + c];
        float nm = fmaxf(m, v);
        d = d * __expf(m - nm) + __expf(v - nm);
        m = nm;
    }
    for (int o = 16; o > 0; o >>= 1) {
        float om = __shfl_xor_sync(0xffffffff, m, o);
        float od = __shfl_xor_sync(0xffffffff, d, o);
        float nm = fmaxf(m, om);
        d = d * __expf(m - nm) + od * __expf(om - nm);
        m = nm;
    }
    for (int c = lane; c < cols; c += 32) y[row * cols + c] = __expf(x[row * cols + c] - m) / d;
}
