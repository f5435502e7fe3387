// kernelrace-args: --block-dim 64
// verdict: clean
// 1-D 3-point stencil with a one-element halo on each side.
__global__ void stencil1d(const float *in, float *out, int n) {
    __shared__ float s[64 + 2];
    int g = blockIdx.x * blockDim.x + threadIdx.x;
    int l = threadIdx.x + 1;
    s[l] = g < n ? in[g] : 0.0f;
    if (threadIdx.x == 0) s[0] = g > 0 ? in[g - 1] : 0.0f;
    if (threadIdx.x == blockDim.x - 1) s[l + 1] = g + 1 < n ? in[g + 1] : 0.0f;
    __syncthreads();
    if (g < n) out[g] = 0.25f * s[l - 1] + 0.5f * s[l] + 0.25f * s[l + 1];
}
