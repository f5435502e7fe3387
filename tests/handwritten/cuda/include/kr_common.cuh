// Shared helpers for the split-over-a-header kernels (included, not checked on its own).
#pragma once
#define BLOCK 64
__device__ __forceinline__ int global_id() { return blockIdx.x * blockDim.x + threadIdx.x; }
__device__ __forceinline__ float warp_sum(float v) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffff, v, o);
    return v;
}
template <typename T>
__device__ void block_load(T *dst, const T *src) {
    dst[threadIdx.x] = src[blockIdx.x * BLOCK + threadIdx.x];
}
