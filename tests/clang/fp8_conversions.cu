// A value of <cuda_fp8.h>'s 8-bit float types built from a number (`__nv_fp8_e4m3(x)`, the bundled
// header's constructor: its byte an uninterpreted function of x) and stored, directly or from a
// template helper whose operand's type is the template's.
#include <cuda_fp8.h>

template <typename S>
__device__ void convert_into(const S *in, __nv_fp8_e4m3 *out, int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        out[i] = __nv_fp8_e4m3((float)in[i]);
}

__global__ void from_half(const __half *in, __nv_fp8_e4m3 *out, int n) { convert_into(in, out, n); }

__global__ void from_float(const float *in, __nv_fp8_e5m2 *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = __nv_fp8_e5m2(in[i]);
}

// Two threads store the conversions of two different inputs into one byte: a race.
__global__ void halved(const float *in, __nv_fp8_e4m3 *out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    out[i / 2] = __nv_fp8_e4m3(in[i]);   // expect: write-after-write
}
