// kernelrace-args: --block-dim 64
// verdict: clean
// cg::sync(block) as a barrier between a store and the neighbour read.
#include <cooperative_groups.h>
using namespace cooperative_groups;
__global__ void neighbour(const float *in, float *out) {
    __shared__ float s[64];
    thread_block b = this_thread_block();
    s[threadIdx.x] = in[blockIdx.x * 64 + threadIdx.x];
    b.sync();
    out[blockIdx.x * 64 + threadIdx.x] = s[(threadIdx.x + 1) % 64];
}
