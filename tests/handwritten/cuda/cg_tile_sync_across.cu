// kernelrace-args: --block-dim 64
// verdict: race
// race: s line 13: tile.sync() orders only the 32 threads of one tile, but each thread reads an element of the other tile
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
__global__ void tile_swap(const float *in, float *out) {
    __shared__ float s[64];
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<32> tile = cg::tiled_partition<32>(block);
    unsigned t = threadIdx.x;
    s[t] = in[blockIdx.x * 64 + t];
    tile.sync();
    out[blockIdx.x * 64 + t] = s[(t + 32) % 64];   // BUG
}
