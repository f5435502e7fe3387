// The grid's index vectors through its group (`grid.block_index()`, `grid.dim_blocks()`, mlx).
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

// each block its own row of the grid: clean
__global__ void blocks(float *out) {
    auto grid = cg::this_grid();
    auto block = cg::this_thread_block();
    long b = grid.block_index().y * grid.dim_blocks().x + grid.block_index().x;
    out[b * block.dim_threads().x + block.thread_index().x] = threadIdx.x;
}

// the row's length taken as gridDim.y: blocks overlap wherever gridDim.x > gridDim.y
__global__ void short_rows(float *out) {
    auto grid = cg::this_grid();
    auto block = cg::this_thread_block();
    long b = grid.block_index().y * grid.dim_blocks().y + grid.block_index().x;
    out[b * block.dim_threads().x + block.thread_index().x] = blockIdx.x;
}
