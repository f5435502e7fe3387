// kernelrace-args: --block-dim 64
// verdict: race
// race: s line 13: the cooperative-groups reduction lost its block.sync() inside the loop
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
__global__ void cg_reduce(const float *in, float *out) {
    cg::thread_block block = cg::this_thread_block();
    __shared__ float s[64];
    unsigned t = threadIdx.x;
    s[t] = in[blockIdx.x * 64 + t];
    block.sync();
    for (unsigned k = 32; k > 0; k >>= 1) {
        if (t < k) s[t] += s[t + k];   // BUG
    }
    if (t == 0) out[blockIdx.x] = s[0];
}
