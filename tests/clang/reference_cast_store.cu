// Halves stored through a reference cast of a member (`reinterpret_cast<half&>(b.scale.x) = v`),
// and a half2 built with make_half2.
#include <cuda_fp16.h>

struct block_q {
    half2 scale;
    signed char q[32];
};

__global__ void quantise(block_q *blocks, const float *x, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const int b = i / 32, j = i % 32;
    const float v = x[i];
    blocks[b].q[j] = (signed char)__half2int_rn(__float2half(v));
    if (j > 0) return;
    reinterpret_cast<half &>(blocks[b].scale.x) = __float2half(v);
    reinterpret_cast<half &>(blocks[b].scale.y) = __int2half_rn(j);
}

__global__ void quantise_shared_scale(block_q *blocks, const float *x) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    blocks[0].scale = make_half2(__float2half(x[i]), __float2half(0.0f));
}
