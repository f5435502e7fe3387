// kernelrace-args: --block-dim 64
// verdict: clean
// Block sum split over a header: the id helper, the block load template and the warp sum come from include/kr_common.cuh.
#include "include/kr_common.cuh"
__global__ void block_sum(const float *in, float *out) {
    __shared__ float s[BLOCK];
    block_load(s, in);
    __syncthreads();
    float v = s[threadIdx.x] + s[(threadIdx.x + 32) % BLOCK];
    v = warp_sum(v);
    if (threadIdx.x == 0) out[blockIdx.x] = v;
}
