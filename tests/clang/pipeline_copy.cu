// <cuda_pipeline.h>'s asynchronous copies into shared memory, modelled as cp.async.
#include <cuda_pipeline.h>

// Clean: each thread copies 16 bytes, waits, and reads a neighbour's float after the barrier.
__global__ void staged(const float *in, float *out) {
    __shared__ float tile[512];
    __pipeline_memcpy_async(&tile[threadIdx.x * 4], &in[threadIdx.x * 4], 16);
    __pipeline_commit();
    __pipeline_wait_prior(0);
    __syncthreads();
    out[threadIdx.x] = tile[(threadIdx.x * 4 + 6) % 512];
}

// A race: the neighbour's float is read with no barrier after the wait.
__global__ void staged_unsynced(const float *in, float *out) {
    __shared__ float tile[512];
    __pipeline_memcpy_async(&tile[threadIdx.x * 4], &in[threadIdx.x * 4], 16);
    __pipeline_commit();
    __pipeline_wait_prior(0);
    out[threadIdx.x] = tile[(threadIdx.x * 4 + 6) % 512];
}

// Never waited for: unknown.
__global__ void staged_unwaited(const float *in, float *out) {
    __shared__ float tile[512];
    __pipeline_memcpy_async(&tile[threadIdx.x * 4], &in[threadIdx.x * 4], 16);
    __syncthreads();
    out[threadIdx.x] = tile[threadIdx.x];
}
