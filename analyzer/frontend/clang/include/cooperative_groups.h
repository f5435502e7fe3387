/* kernelrace's <cooperative_groups.h>: the groups kernelrace models (block, grid, tiles of a
   constant size) and their sync; kernelrace reads the calls by name. */
#pragma once
namespace cooperative_groups {
struct thread_group { __device__ void sync() const; __device__ unsigned size() const; __device__ unsigned thread_rank() const; };
struct thread_block : thread_group { __device__ dim3 group_index() const; __device__ dim3 thread_index() const;
    __device__ dim3 group_dim() const; __device__ dim3 dim_threads() const; __device__ unsigned num_threads() const; };
struct grid_group : thread_group { __device__ bool is_valid() const; __device__ unsigned long long block_rank() const;
    __device__ unsigned long long num_blocks() const; __device__ unsigned long long num_threads() const;
    __device__ unsigned long long thread_rank() const; __device__ unsigned long long size() const;
    __device__ dim3 block_index() const; __device__ dim3 dim_blocks() const; };
template <unsigned N> struct thread_block_tile : thread_group {
    __device__ unsigned meta_group_rank() const; __device__ unsigned meta_group_size() const;
    template <class T> __device__ T shfl(T, int) const; template <class T> __device__ T shfl_down(T, unsigned) const;
    template <class T> __device__ T shfl_up(T, unsigned) const; template <class T> __device__ T shfl_xor(T, unsigned) const;
    __device__ unsigned ballot(int) const; __device__ int any(int) const; __device__ int all(int) const; };
struct coalesced_group : thread_group {};
__device__ thread_block this_thread_block();
__device__ grid_group this_grid();
__device__ coalesced_group coalesced_threads();
template <unsigned N, class G> __device__ thread_block_tile<N> tiled_partition(const G &);
__device__ thread_group tiled_partition(const thread_group &, unsigned);
template <class G> __device__ void sync(const G &);
}
namespace cg = cooperative_groups;
