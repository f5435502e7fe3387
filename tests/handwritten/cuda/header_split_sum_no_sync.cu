// kernelrace-args: --block-dim 64
// verdict: race
// race: s line 8: the tile loaded by the header's block_load is read at another thread's index with no barrier
#include "include/kr_common.cuh"
__global__ void block_sum(const float *in, float *out) {
    __shared__ float s[BLOCK];
    block_load(s, in);
    float v = s[threadIdx.x] + s[(threadIdx.x + 32) % BLOCK];   // BUG
    v = warp_sum(v);
    if (threadIdx.x == 0) out[blockIdx.x] = v;
}
