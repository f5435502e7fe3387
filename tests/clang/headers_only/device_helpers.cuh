// A header of device helpers with no kernel: the files that include it launch the kernels.
#pragma once
namespace helpers::math {
extern __device__ void report(void);

template <typename T>
struct Shared {
    __device__ T *get() { extern __shared__ int raw[]; return reinterpret_cast<T *>(raw); }
};

template <typename T>
__device__ T clamp_to(T v, T lo, T hi) { return v < lo ? lo : (v > hi ? hi : v); }
}
