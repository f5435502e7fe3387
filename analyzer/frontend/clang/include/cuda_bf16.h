/* kernelrace's <cuda_bf16.h>: __nv_bfloat16 as clang's __bf16. */
#pragma once
typedef __bf16 __nv_bfloat16;
typedef __bf16 nv_bfloat16;
struct __align__(4) __nv_bfloat162 {
    __nv_bfloat16 x, y;
    __nv_bfloat162() = default;
    __host__ __device__ __nv_bfloat162(const __nv_bfloat16 &a, const __nv_bfloat16 &b) : x(a), y(b) {}
};
typedef __nv_bfloat162 nv_bfloat162;
__host__ __device__ __nv_bfloat16 __float2bfloat16(float);
__host__ __device__ __nv_bfloat16 __float2bfloat16_rn(float);
__host__ __device__ float __bfloat162float(__nv_bfloat16);
__host__ __device__ __nv_bfloat162 __floats2bfloat162_rn(float, float);
