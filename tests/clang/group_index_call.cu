// Members of the index vectors a thread block's methods return, read straight off the call
// (`block.dim_threads().x`), in a template kernel.
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

template <typename T>
__global__ void rows(T *out, T v) {
    auto block = cg::this_thread_block();
    out[block.group_index().x * block.dim_threads().x + block.thread_index().x] = v;
}

// The row's length taken as blockDim.y: rows overlap wherever blockDim.x > blockDim.y.
template <typename T>
__global__ void short_rows(T *out, T v) {
    auto block = cg::this_thread_block();
    out[block.group_index().x * block.dim_threads().y + block.thread_index().x] = v + block.thread_index().x;
}
