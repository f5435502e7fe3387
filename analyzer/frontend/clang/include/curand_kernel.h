/* kernelrace's <curand_kernel.h>: the generator states (opaque per-thread data of the library's
   sizes) and the device API's generators. */
#pragma once
struct curandStateXORWOW { unsigned int d, v[5]; int boxmuller_flag, boxmuller_flag_double; float boxmuller_extra; double boxmuller_extra_double; };
typedef curandStateXORWOW curandState; typedef curandStateXORWOW curandState_t; typedef curandStateXORWOW curandStateXORWOW_t;
struct curandStatePhilox4_32_10 { unsigned int c[4], o[4], k[2]; unsigned int state; int boxmuller_flag, boxmuller_flag_double; float boxmuller_extra; double boxmuller_extra_double; };
typedef curandStatePhilox4_32_10 curandStatePhilox4_32_10_t;
template <class S> __device__ void curand_init(unsigned long long, unsigned long long, unsigned long long, S *);
template <class S> __device__ unsigned int curand(S *);
template <class S> __device__ float curand_uniform(S *);
template <class S> __device__ double curand_uniform_double(S *);
template <class S> __device__ float curand_normal(S *);
template <class S> __device__ double curand_normal_double(S *);
template <class S> __device__ float4 curand_uniform4(S *);
template <class S> __device__ float4 curand_normal4(S *);
template <class S> __device__ float curand_log_normal(S *, float, float);
template <class S> __device__ unsigned int curand_poisson(S *, double);
