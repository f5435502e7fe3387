// The 8-bit float types of <cuda_fp8.h> (one-byte structs), filled through a template helper from a
// struct argument, and copied element by element.
#include <cuda_fp8.h>

template <typename T>
__device__ void fill_with(T *buf, T value, unsigned n) {
    for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        buf[i] = value;
}

__global__ void fill_fp8(__nv_fp8_e4m3 *buf, __nv_fp8_e4m3 value, unsigned n) { fill_with(buf, value, n); }

__global__ void copy_fp8(const __nv_fp8_e5m2 *src, __nv_fp8_e5m2 *dst, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        dst[i] = src[i];
}

// Each thread writes its own byte and its neighbour's, two different values: a race.
__global__ void neighbour_fp8(__nv_fp8_e4m3 *buf, __nv_fp8_e4m3 value, __nv_fp8_e4m3 other) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    buf[i] = value;
    buf[i + 1] = other;
}

// A conversion to float: a method of the bundled header, not read; the kernel is unknown, naming it.
__global__ void to_float(const __nv_fp8_e4m3 *in, float *out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    out[i] = float(in[i]);
}
