// kernelrace-args: --block-dim 64
// verdict: clean
// tiled_partition<32>: each tile exchanges data only among its own threads after tile.sync().
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
__global__ void tile_rotate(const float *in, float *out) {
    __shared__ float s[64];
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<32> tile = cg::tiled_partition<32>(block);
    unsigned t = threadIdx.x;
    s[t] = in[blockIdx.x * 64 + t];
    tile.sync();
    unsigned base = t & ~31u;
    out[blockIdx.x * 64 + t] = s[base + ((t + 1) & 31)];
}
