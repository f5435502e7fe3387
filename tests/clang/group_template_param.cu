// A device function template whose group is a type parameter (`Group &g`), reducing over it.
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
namespace cg = cooperative_groups;

template <typename T, typename Group> __device__ T tile_sum(T v, Group &g) {
    return cg::reduce(g, v, cg::plus<T>());
}

// Clean: each warp's sum written by its lane 0 to its own slot, read after the barrier.
template <class T> __global__ void warp_sums(const T *in, T *out) {
    __shared__ T partial[32];
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
    T s = tile_sum(in[block.thread_rank()], warp);
    if (warp.thread_rank() == 0) partial[warp.meta_group_rank()] = s;
    block.sync();
    if (block.thread_rank() == 0) out[blockIdx.x] = partial[0] + partial[1];
}

// A race: the partials are read before the barrier.
template <class T> __global__ void warp_sums_early(const T *in, T *out) {
    __shared__ T partial[32];
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
    T s = tile_sum(in[block.thread_rank()], warp);
    if (warp.thread_rank() == 0) partial[warp.meta_group_rank()] = s;
    if (block.thread_rank() == 0) out[blockIdx.x] = partial[0] + partial[1];
}
