// A cooperative group passed by value to a device function that synchronises it.
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

__device__ float block_sum(float v, float *scratch, cg::thread_block cta) {
    scratch[cta.thread_rank()] = v;
    cta.sync();
    float s = 0.0f;
    for (int i = 0; i < 64; ++i) s += scratch[i];
    cta.sync();
    return s;
}

__global__ void sums(const float *in, float *out) {
    __shared__ float scratch[64];
    cg::thread_block cta = cg::this_thread_block();
    float s = block_sum(in[blockIdx.x * 64 + threadIdx.x], scratch, cta);
    if (threadIdx.x == 0) out[blockIdx.x] = s;
}
