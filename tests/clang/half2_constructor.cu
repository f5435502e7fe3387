// `__half2(a, b)` and `__nv_bfloat162(a, b)`: the toolkit's constructors, which give the members the
// arguments (x = a, y = b).
#include <cuda_fp16.h>
#include <cuda_bf16.h>

__global__ void pairs(const __half *in, __half2 *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    __half2 h(in[2 * i], in[2 * i + 1]);
    __half2 zero(0, 0);
    if (i < n)
        out[i] = h;
    else
        out[i] = zero;
}

// Both members zero: the guard of `never` cannot hold (clean), that of `always` always does, and a
// thread stores where its neighbour does.
__global__ void never(const __nv_bfloat16 *in, __nv_bfloat162 *out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    __nv_bfloat162 p(in[i], in[i]), z(0.0f, 0.0f);
    out[i] = p;
    if (z.x != z.y)
        out[i + 1] = p;
}

__global__ void always(const __nv_bfloat16 *in, __nv_bfloat162 *out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    __nv_bfloat162 p(in[i], in[i]), z(0.0f, 0.0f);
    out[i] = p;
    if (z.x == z.y)
        out[i + 1] = p;   // expect: write-after-write
}
