// The arithmetic intrinsics with a rounding mode (__fmaf_rn and friends) are values: a kernel using
// them is analysed. Clean: each thread its own element; a race: every thread writes out[0].
__global__ void scaled(const float *x, float *out, float a) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    out[i] = __fmaf_rn(a, x[i], __fmul_rn(x[i], __fadd_rn(a, 1.0f)));
}

__global__ void scaled_one(const float *x, float *out, float a) {
    out[0] = __fmaf_rn(a, x[threadIdx.x], __fdiv_rn(1.0f, a));
}
