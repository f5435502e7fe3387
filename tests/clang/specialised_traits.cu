// A member of a class template's specialisation on the kernel's parameter, and the grid's block rank.
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

template <int K> struct tile_traits { static constexpr int rows = K * 2; };

template <int Q>
__global__ void rows_of(float *out) {
    int r = threadIdx.x % tile_traits<Q>::rows;
    out[cg::this_grid().block_rank() * 64 + r] = threadIdx.x;   // expect: write-after-write (rows < 64 threads)
}
