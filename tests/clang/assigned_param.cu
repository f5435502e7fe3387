// A scalar argument the kernel changes: a local that starts as the argument.
__global__ void scale_rows(float *out, const float *in, float beta, int n) {
    if (beta == 0.0f) beta = 1.0f;
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        n -= i;
        out[i] = in[i] * beta + n;
    }
}
