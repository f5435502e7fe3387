// A warp tile's reduce (cooperative_groups/reduce.h), then one partial per warp in shared memory.
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
namespace cg = cooperative_groups;

__global__ void row_sums(float *out, const float *in, int n) {
    __shared__ float partial[32];
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
    float acc = 0.0f;
    for (int i = block.thread_rank(); i < n; i += block.size()) acc += in[i];
    float w = cg::reduce(warp, acc, cg::plus<float>{});
    if (warp.thread_rank() == 0) partial[warp.meta_group_rank()] = w;
    block.sync();
    if (warp.meta_group_rank() == 0) {
        float s = cg::reduce(warp, warp.thread_rank() < warp.meta_group_size() ? partial[warp.thread_rank()] : 0.0f,
                             cg::plus<float>{});
        if (warp.thread_rank() == 0) out[blockIdx.x] = s;
    }
}

__global__ void row_sums_unsynced(float *out, const float *in) {
    namespace groups = cooperative_groups;   // an alias inside the kernel
    __shared__ float partial[32];
    groups::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
    float w = cg::reduce(warp, in[block.thread_rank()], cg::plus<float>{});
    if (warp.thread_rank() == 0) partial[warp.meta_group_rank()] = w;
    out[block.thread_rank()] = partial[block.thread_rank() % 32];
}

__global__ void row_sums_every_lane(float *out, const float *in) {
    __shared__ float partial[32];
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
    float w = cg::reduce(warp, in[block.thread_rank()], cg::plus<float>{});
    partial[warp.meta_group_rank()] = w;   // every lane of a tile stores the tile's one sum
    block.sync();
    if (block.thread_rank() == 0) out[blockIdx.x] = partial[0];
}
