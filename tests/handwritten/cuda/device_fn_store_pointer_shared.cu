// kernelrace-args: --block-dim 64
// verdict: race
// race: s line 8: the helper stores into shared memory and the caller reads a neighbour's slot without a barrier
__device__ void put(float *dst, int i, float v) { dst[i] = v; }
__global__ void fill(const float *in, float *out) {
    __shared__ float s[64];
    put(s, threadIdx.x, in[blockIdx.x * 64 + threadIdx.x]);
    out[blockIdx.x * 64 + threadIdx.x] = s[63 - threadIdx.x];   // BUG
}
