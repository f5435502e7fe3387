// kernelrace-args: --block-dim 32
// verdict: clean
// Row softmax with one warp per row of 32: max and sum with __shfl_xor_sync butterflies.
__device__ __forceinline__ float warpMax(float v) {
    for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffff, v, o));
    return v;
}
__device__ __forceinline__ float warpSum(float v) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffff, v, o);
    return v;
}
__global__ void softmax_warp(const float *x, float *y) {
    int row = blockIdx.x;
    int lane = threadIdx.x;
    float v = x[row * 32 + lane];
    float m = warpMax(v);
    float e = __expf(v - m);
    float s = warpSum(e);
    y[row * 32 + lane] = e / s;
}
