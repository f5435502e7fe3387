// Shuffles within tiles of 8 threads: each tile's first thread writes its tile's sum.
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

__global__ void tile_sums(const float *in, float *out) {
    cg::thread_block cta = cg::this_thread_block();
    cg::thread_block_tile<8> tile = cg::tiled_partition<8>(cta);
    float v = in[blockIdx.x * blockDim.x + threadIdx.x];
    for (int offset = 4; offset > 0; offset /= 2) v += tile.shfl_down(v, offset);
    if (tile.thread_rank() == 0) out[blockIdx.x * (blockDim.x / 8) + tile.meta_group_rank()] = v;
}

__global__ void one_slot(const float *in, float *out) {
    cg::thread_block_tile<8> tile = cg::tiled_partition<8>(cg::this_thread_block());
    float v = tile.shfl_xor(in[threadIdx.x], 1);
    if (tile.thread_rank() == 0) out[blockIdx.x] = v;   // expect: write-after-write (every tile's first thread)
}
