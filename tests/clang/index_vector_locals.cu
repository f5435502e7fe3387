// Local copies of the builtin index vectors (`auto size = block.dim_threads();`, `dim3 b = blockDim;`,
// mlx): their members are the launch's. (Before, the first form left the copy's members unset: the
// kernel read as if it never read blockDim, checked with one thread a block.)
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

// every thread its own slot, then all read slot 0 after the barrier: clean
__global__ void saved_sizes(int *out, int v) {
    auto size = cg::this_thread_block().dim_threads();
    auto idx = cg::this_thread_block().thread_index();
    __shared__ int s[1024];
    s[idx.y * size.x + idx.x] = v + idx.x;
    cg::sync(cg::this_thread_block());
    out[blockIdx.x] = s[0];
}

// the same without the barrier: slot 0 read while thread 0 writes it
__global__ void saved_sizes_unsynced(int *out, int v) {
    auto size = cg::this_thread_block().dim_threads();
    auto idx = cg::this_thread_block().thread_index();
    __shared__ int s[1024];
    s[idx.y * size.x + idx.x] = v + idx.x;
    out[blockIdx.x] = s[0];
}

// each block its rows: clean
__global__ void copies(int *out) {
    dim3 b = blockDim;
    uint3 t = threadIdx;
    out[blockIdx.x * b.x * b.y + t.y * b.x + t.x] = t.x;
}

// a block's span taken as one row: blocks overlap once a block has two rows
__global__ void copies_short(int *out) {
    dim3 b = blockDim;
    uint3 t = threadIdx;
    out[blockIdx.x * b.x + t.y * b.x + t.x] = t.y;
}
