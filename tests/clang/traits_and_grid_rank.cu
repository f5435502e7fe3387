// A traits type's constant in a template kernel never launched is a symbolic parameter; the grid's
// thread rank is the global linear index.
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

template <typename Traits>
__global__ void strided(float *data) {
    int warp = threadIdx.x / 32;
    data[blockIdx.x * Traits::WARPS + warp] += 1.0f;   // expect: write-after-read, write-after-write (threads of one warp; blocks when WARPS is small)
}

__global__ void by_rank(const float *in, float *out, unsigned long n) {
    unsigned long i = cg::this_grid().thread_rank();
    if (i < n) out[i] = 2.0f * in[i];
}
