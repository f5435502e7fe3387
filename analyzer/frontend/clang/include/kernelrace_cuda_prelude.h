/* kernelrace's CUDA prelude (force-included): the keywords, builtin variables, vector types and
   device functions kernelrace models, declared for clang's CUDA device mode without the toolkit. */
#pragma once
#define __host__ __attribute__((host))
#define __device__ __attribute__((device))
#define __global__ __attribute__((global))
#define __shared__ __attribute__((shared))
#define __constant__ __attribute__((constant))
#define __managed__ __attribute__((managed))
#define __launch_bounds__(...) __attribute__((launch_bounds(__VA_ARGS__)))
#define __forceinline__ __inline__ __attribute__((always_inline))
#define __noinline__ __attribute__((noinline))
#define __restrict__ __restrict
#define __align__(n) __attribute__((aligned(n)))
#define __grid_constant__
#define CUDART_INF_F __builtin_huge_valf()
#ifndef NULL
#define NULL 0
#endif
typedef unsigned long size_t;
typedef long ptrdiff_t;
#include "cstdint"             /* int32_t and friends: nvcc's host headers bring them */
typedef unsigned int uint;     /* glibc's <sys/types.h> names, which nvcc's host headers bring */
typedef unsigned short ushort;
typedef unsigned long ulong;
typedef int cudaError_t;
typedef struct CUstream_st *cudaStream_t;
typedef struct CUevent_st *cudaEvent_t;
enum { cudaSuccess = 0, cudaMemcpyHostToDevice = 1, cudaMemcpyDeviceToHost = 2, cudaMemcpyDeviceToDevice = 3,
       cudaMemcpyDefault = 4 };
#define __KR_VEC2(T, N) struct __align__(2 * sizeof(T)) N##2 { T x, y; }; \
    __host__ __device__ inline N##2 make_##N##2(T x, T y) { N##2 v; v.x = x; v.y = y; return v; }
#define __KR_VEC3(T, N) struct N##3 { T x, y, z; }; \
    __host__ __device__ inline N##3 make_##N##3(T x, T y, T z) { N##3 v; v.x = x; v.y = y; v.z = z; return v; }
#define __KR_VEC4(T, N) struct __align__(4 * sizeof(T)) N##4 { T x, y, z, w; }; \
    __host__ __device__ inline N##4 make_##N##4(T x, T y, T z, T w) { N##4 v; v.x = x; v.y = y; v.z = z; v.w = w; return v; }
#define __KR_VECS(T, N) __KR_VEC2(T, N) __KR_VEC3(T, N) __KR_VEC4(T, N)
__KR_VECS(float, float) __KR_VECS(int, int) __KR_VECS(unsigned int, uint) __KR_VECS(double, double)
__KR_VECS(char, char) __KR_VECS(unsigned char, uchar) __KR_VECS(short, short) __KR_VECS(unsigned short, ushort)
__KR_VECS(long, long) __KR_VECS(unsigned long, ulong) __KR_VECS(long long, longlong)
__KR_VECS(unsigned long long, ulonglong)
#undef __KR_VECS
#undef __KR_VEC2
#undef __KR_VEC3
#undef __KR_VEC4
struct dim3 {
    unsigned int x, y, z;
    __host__ __device__ constexpr dim3(unsigned int x = 1, unsigned int y = 1, unsigned int z = 1) : x(x), y(y), z(z) {}
    __host__ __device__ constexpr dim3(uint3 v) : x(v.x), y(v.y), z(v.z) {}
};
extern "C" __host__ int cudaConfigureCall(dim3 grid, dim3 block, size_t shared = 0, cudaStream_t stream = 0);
extern "C" __host__ unsigned __cudaPushCallConfiguration(dim3 grid, dim3 block, size_t shared = 0, void *stream = 0);
extern __device__ const uint3 threadIdx;
extern __device__ const uint3 blockIdx;
extern __device__ const dim3 blockDim;
extern __device__ const dim3 gridDim;
extern __device__ const int warpSize;

/* Barriers, fences, warp intrinsics, atomics: declared generically; kernelrace reads them by name. */
__device__ void __syncthreads(void);
__device__ int __syncthreads_count(int);
__device__ int __syncthreads_and(int);
__device__ int __syncthreads_or(int);
__device__ void __syncwarp(unsigned mask = 0xffffffffu);
__device__ void __threadfence(void);
__device__ void __threadfence_block(void);
__device__ void __threadfence_system(void);
__device__ unsigned __activemask(void);
__device__ unsigned __ballot_sync(unsigned, int);
__device__ int __any_sync(unsigned, int);
__device__ int __all_sync(unsigned, int);
template <class T> __device__ T __shfl_sync(unsigned, T, int, int = 32);
template <class T> __device__ T __shfl_up_sync(unsigned, T, unsigned, int = 32);
template <class T> __device__ T __shfl_down_sync(unsigned, T, unsigned, int = 32);
template <class T> __device__ T __shfl_xor_sync(unsigned, T, int, int = 32);
template <class T> __device__ T __shfl(T, int, int = 32);
template <class T> __device__ T __shfl_up(T, unsigned, int = 32);
template <class T> __device__ T __shfl_down(T, unsigned, int = 32);
template <class T> __device__ T __shfl_xor(T, int, int = 32);
template <class T> __device__ T __ldg(const T *);
// a shared-space address as PTX takes it (inline asm's cp.async, ldmatrix): the pointer, in bytes
__device__ unsigned long __cvta_generic_to_shared(const void *);
template <class T> __device__ T __ldca(const T *);
template <class T> __device__ T __ldcg(const T *);
template <class T> __device__ T __ldcs(const T *);
template <class T> __device__ void __stcs(T *, T);
template <class T> __device__ void __stcg(T *, T);
template <class T> __device__ void __stwb(T *, T);
template <class T> __device__ void __stwt(T *, T);
template <class T> __device__ T __ldlu(const T *);
template <class T> __device__ T __ldcv(const T *);
template <class T> __device__ T __reduce_add_sync(unsigned, T);
#define __KR_ATOMIC(name) template <class T, class U> __device__ T name(T *, U); \
    template <class T, class U> __device__ T name##_block(T *, U); template <class T, class U> __device__ T name##_system(T *, U);
__KR_ATOMIC(atomicAdd) __KR_ATOMIC(atomicSub) __KR_ATOMIC(atomicExch) __KR_ATOMIC(atomicMin) __KR_ATOMIC(atomicMax)
__KR_ATOMIC(atomicAnd) __KR_ATOMIC(atomicOr) __KR_ATOMIC(atomicXor) __KR_ATOMIC(atomicInc) __KR_ATOMIC(atomicDec)
#undef __KR_ATOMIC
template <class T, class U, class V> __device__ T atomicCAS(T *, U, V);
template <class T, class U, class V> __device__ T atomicCAS_block(T *, U, V);
__device__ int __popc(unsigned);
__device__ int __popcll(unsigned long long);
__device__ unsigned __brev(unsigned);
__device__ unsigned long long __brevll(unsigned long long);
__device__ int __clz(int);
__device__ int __ffs(int);
__device__ int __mul24(int, int);
__device__ unsigned __umul24(unsigned, unsigned);
__device__ int __mulhi(int, int);
__device__ float __fdividef(float, float);
__device__ float __expf(float);
__device__ float __logf(float);
__device__ float __sinf(float);
__device__ float __cosf(float);
__device__ float __powf(float, float);
__device__ float __saturatef(float);
// SIMD within a word and byte permutes (sm_61+): values of their arguments, no memory touched
__device__ int __dp4a(int, int, int);
__device__ unsigned __dp4a(unsigned, unsigned, unsigned);
__device__ int __dp2a_lo(int, int, int);
__device__ int __dp2a_hi(int, int, int);
__device__ unsigned __byte_perm(unsigned, unsigned, unsigned);
#define __KR_SIMD(name) __device__ unsigned name##2(unsigned, unsigned); __device__ unsigned name##4(unsigned, unsigned);
__KR_SIMD(__vadd) __KR_SIMD(__vsub) __KR_SIMD(__vaddss) __KR_SIMD(__vsubss) __KR_SIMD(__vaddus) __KR_SIMD(__vsubus)
__KR_SIMD(__vabsdiffs) __KR_SIMD(__vabsdiffu) __KR_SIMD(__vavgs) __KR_SIMD(__vavgu) __KR_SIMD(__vmaxs) __KR_SIMD(__vmaxu)
__KR_SIMD(__vmins) __KR_SIMD(__vminu) __KR_SIMD(__vcmpeq) __KR_SIMD(__vcmpne) __KR_SIMD(__vcmpges) __KR_SIMD(__vcmpgeu)
__KR_SIMD(__vcmpgts) __KR_SIMD(__vcmpgtu) __KR_SIMD(__vcmples) __KR_SIMD(__vcmpleu) __KR_SIMD(__vcmplts) __KR_SIMD(__vcmpltu)
__KR_SIMD(__vseteq) __KR_SIMD(__vsetne) __KR_SIMD(__vsetges) __KR_SIMD(__vsetgts) __KR_SIMD(__vsetles) __KR_SIMD(__vsetlts)
#undef __KR_SIMD
/* the arithmetic intrinsics with a rounding mode (values: uninterpreted functions) */
__device__ float __fmaf_rn(float, float, float);
__device__ float __fmaf_rz(float, float, float);
__device__ float __fmaf_ru(float, float, float);
__device__ float __fmaf_rd(float, float, float);
__device__ float __fadd_rn(float, float);
__device__ float __fadd_rz(float, float);
__device__ float __fsub_rn(float, float);
__device__ float __fmul_rn(float, float);
__device__ float __fmul_rz(float, float);
__device__ float __fdiv_rn(float, float);
__device__ float __frcp_rn(float);
__device__ float __fsqrt_rn(float);
__device__ float __frsqrt_rn(float);
__device__ double __fma_rn(double, double, double);
__device__ double __dadd_rn(double, double);
__device__ double __dmul_rn(double, double);
__device__ double __ddiv_rn(double, double);
__device__ float __int_as_float(int);
__device__ int __float_as_int(float);
__device__ float __uint_as_float(unsigned);
__device__ unsigned __float_as_uint(float);
__device__ int __float2int_rn(float);
__device__ int __float2int_rz(float);
__device__ float __int2float_rn(int);
__device__ long long clock64(void);
__device__ int clock(void);
__device__ void __nanosleep(unsigned);
__device__ void __trap(void);
__device__ void __assume(bool);
template <class T> __host__ __device__ constexpr T min(T a, T b) { return a < b ? a : b; }
template <class T> __host__ __device__ constexpr T max(T a, T b) { return a > b ? a : b; }
__host__ __device__ inline int min(int a, unsigned b) { return a < (int)b ? a : (int)b; }
__host__ __device__ inline int max(int a, unsigned b) { return a > (int)b ? a : (int)b; }
extern "C" __host__ __device__ int printf(const char *, ...);
extern "C" __host__ __device__ void __assert_fail(const char *, const char *, unsigned, const char *);
#define assert(e) __kernelrace_assert(e)
__host__ __device__ void __kernelrace_assert(bool);
/* Textures: a fetch is a value (texture memory is read-only to kernels); surface writes are unknown. */
typedef unsigned long long cudaTextureObject_t;
typedef unsigned long long cudaSurfaceObject_t;
enum cudaTextureReadMode { cudaReadModeElementType = 0, cudaReadModeNormalizedFloat = 1 };
enum cudaSurfaceBoundaryMode { cudaBoundaryModeZero = 0, cudaBoundaryModeClamp = 1, cudaBoundaryModeTrap = 2 };
struct textureReference { int normalized, filterMode, addressMode[3], channelDesc; };
template <class T, int dim = 1, enum cudaTextureReadMode mode = cudaReadModeElementType>
struct __attribute__((device_builtin_texture_type)) texture : public textureReference { };
template <class T, int d, enum cudaTextureReadMode m> __device__ T tex1Dfetch(texture<T, d, m>, int);
template <class T, int d, enum cudaTextureReadMode m> __device__ T tex1D(texture<T, d, m>, float);
template <class T, int d, enum cudaTextureReadMode m> __device__ T tex2D(texture<T, d, m>, float, float);
template <class T, int d, enum cudaTextureReadMode m> __device__ T tex3D(texture<T, d, m>, float, float, float);
template <class T> __device__ T tex1Dfetch(cudaTextureObject_t, int);
template <class T> __device__ T tex1D(cudaTextureObject_t, float);
template <class T> __device__ T tex2D(cudaTextureObject_t, float, float);
template <class T> __device__ T tex3D(cudaTextureObject_t, float, float, float);
template <class T> __device__ T tex2DLayered(cudaTextureObject_t, float, float, int);
template <class T> __device__ T texCubemap(cudaTextureObject_t, float, float, float);
template <class T> __device__ void surf1Dwrite(T, cudaSurfaceObject_t, int, int = 0);
template <class T> __device__ void surf2Dwrite(T, cudaSurfaceObject_t, int, int, int = 0);
template <class T> __device__ void surf3Dwrite(T, cudaSurfaceObject_t, int, int, int, int = 0);
template <class T> __device__ T surf2Dread(cudaSurfaceObject_t, int, int, int = 0);
template <class T> __device__ void surf2Dread(T *, cudaSurfaceObject_t, int, int, int = 0);
/* Host API names, so that host code parses (kernelrace does not model them). */
template <class T> __host__ cudaError_t cudaMalloc(T **, size_t);
__host__ cudaError_t cudaFree(void *);
__host__ cudaError_t cudaMemcpy(void *, const void *, size_t, int);
__host__ cudaError_t cudaMemset(void *, int, size_t);
__host__ cudaError_t cudaDeviceSynchronize(void);
__host__ cudaError_t cudaGetLastError(void);
__host__ const char *cudaGetErrorString(cudaError_t);
template <class T> __host__ cudaError_t cudaMemcpyToSymbol(const T &, const void *, size_t, size_t = 0, int = 1);
template <class T> __host__ cudaError_t cudaLaunchKernel(T, dim3, dim3, void **, size_t = 0, cudaStream_t = 0);
#include "kernelrace_math.h"
#include "cuda_fp16.h"
#include "cuda_bf16.h"
