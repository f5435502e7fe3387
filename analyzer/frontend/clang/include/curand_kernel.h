/* kernelrace's <curand_kernel.h>: the generator states (opaque per-thread data of the library's
   sizes) and the device API's generators. */
#pragma once
struct curandStateXORWOW { unsigned int d, v[5]; int boxmuller_flag, boxmuller_flag_double; float boxmuller_extra; double boxmuller_extra_double; };
typedef curandStateXORWOW curandState; typedef curandStateXORWOW curandState_t; typedef curandStateXORWOW curandStateXORWOW_t;
struct curandStatePhilox4_32_10 { unsigned int c[4], o[4], k[2]; unsigned int state; int boxmuller_flag, boxmuller_flag_double; float boxmuller_extra; double boxmuller_extra_double; };
typedef curandStatePhilox4_32_10 curandStatePhilox4_32_10_t;
/* the quasi-random generators: initialised from direction vectors the caller passes (read by curand_init) */
typedef unsigned int curandDirectionVectors32_t[32];
typedef unsigned long long curandDirectionVectors64_t[64];
struct curandStateSobol32 { unsigned int i, x, c; unsigned int direction_vectors[32]; };
typedef curandStateSobol32 curandStateSobol32_t;
struct curandStateSobol64 { unsigned long long i, x, c; unsigned long long direction_vectors[64]; };
typedef curandStateSobol64 curandStateSobol64_t;
template <class S> __device__ void curand_init(unsigned long long, unsigned long long, unsigned long long, S *);
__device__ void curand_init(unsigned int *, unsigned int, curandStateSobol32 *);
__device__ void curand_init(unsigned long long *, unsigned long long, curandStateSobol64 *);
template <class S> __device__ unsigned int curand(S *);
template <class S> __device__ float curand_uniform(S *);
template <class S> __device__ double curand_uniform_double(S *);
template <class S> __device__ float curand_normal(S *);
template <class S> __device__ double curand_normal_double(S *);
template <class S> __device__ float4 curand_uniform4(S *);
template <class S> __device__ float4 curand_normal4(S *);
template <class S> __device__ float curand_log_normal(S *, float, float);
template <class S> __device__ unsigned int curand_poisson(S *, double);
