/* kernelrace's <cuda_fp8.h>: the 8-bit float types as structs of one byte. Their conversions go
   through functions declared, not defined: a value converted is one the analysis does not interpret. */
#pragma once
#include <cuda_fp16.h>
#include <cuda_bf16.h>
typedef unsigned char __nv_fp8_storage_t;
typedef unsigned short __nv_fp8x2_storage_t;
typedef unsigned int __nv_fp8x4_storage_t;
enum __nv_saturation_t { __NV_NOSAT, __NV_SATFINITE };
enum __nv_fp8_interpretation_t { __NV_E4M3, __NV_E5M2 };
__host__ __device__ __nv_fp8_storage_t __kr_fp8_from(float);
__host__ __device__ __nv_fp8_storage_t __kr_fp8_from(double);
__host__ __device__ __nv_fp8_storage_t __kr_fp8_from(int);
__host__ __device__ float __kr_fp8_to_float(__nv_fp8_storage_t);
#define __KR_FP8(NAME)                                                                                  \
    struct __align__(1) NAME {                                                                          \
        __nv_fp8_storage_t __x;                                                                         \
        NAME() = default;                                                                               \
        __host__ __device__ explicit NAME(float f) : __x(__kr_fp8_from(f)) {}                           \
        __host__ __device__ explicit NAME(double f) : __x(__kr_fp8_from(f)) {}                          \
        __host__ __device__ explicit NAME(__half f) : __x(__kr_fp8_from((float)f)) {}                   \
        __host__ __device__ explicit NAME(__nv_bfloat16 f) : __x(__kr_fp8_from((float)f)) {}            \
        __host__ __device__ explicit NAME(int i) : __x(__kr_fp8_from(i)) {}                             \
        __host__ __device__ explicit operator float() const { return __kr_fp8_to_float(__x); }          \
        __host__ __device__ explicit operator __half() const { return (__half)__kr_fp8_to_float(__x); } \
        __host__ __device__ explicit operator __nv_bfloat16() const {                                   \
            return (__nv_bfloat16)__kr_fp8_to_float(__x); }                                             \
    };
__KR_FP8(__nv_fp8_e4m3)
__KR_FP8(__nv_fp8_e5m2)
#undef __KR_FP8
__host__ __device__ __nv_fp8_storage_t __nv_cvt_float_to_fp8(float, __nv_saturation_t, __nv_fp8_interpretation_t);
__host__ __device__ __nv_fp8_storage_t __nv_cvt_halfraw_to_fp8(__half, __nv_saturation_t, __nv_fp8_interpretation_t);
__host__ __device__ __half __nv_cvt_fp8_to_halfraw(__nv_fp8_storage_t, __nv_fp8_interpretation_t);
