/* kernelrace's <cuda_fp16.h>: __half as clang's _Float16, with the conversions and arithmetic
   intrinsics (uninterpreted functions of their arguments). */
#pragma once
typedef _Float16 __half;
typedef _Float16 half;
struct __align__(4) __half2 { __half x, y; };
typedef __half2 half2;
__host__ __device__ __half __float2half(float);
__host__ __device__ __half __float2half_rn(float);
__host__ __device__ float __half2float(__half);
__host__ __device__ __half2 __floats2half2_rn(float, float);
__host__ __device__ __half2 __float2half2_rn(float);
__host__ __device__ __half2 __halves2half2(__half, __half);
__host__ __device__ float2 __half22float2(__half2);
__host__ __device__ __half __low2half(__half2);
__host__ __device__ __half __high2half(__half2);
__host__ __device__ float __low2float(__half2);
__host__ __device__ float __high2float(__half2);
__device__ __half __hadd(__half, __half);
__device__ __half __hsub(__half, __half);
__device__ __half __hmul(__half, __half);
__device__ __half __hdiv(__half, __half);
__device__ __half __hfma(__half, __half, __half);
__device__ __half __hmax(__half, __half);
__device__ __half __hmin(__half, __half);
__device__ __half hexp(__half);
__device__ __half hsqrt(__half);
__device__ __half2 __hadd2(__half2, __half2);
__device__ __half2 __hmul2(__half2, __half2);
__device__ __half2 __hfma2(__half2, __half2, __half2);
__device__ bool __hgt(__half, __half);
__device__ bool __hlt(__half, __half);
