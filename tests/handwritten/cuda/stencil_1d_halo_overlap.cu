// kernelrace-args: --block-dim 64
// verdict: race
// race: s line 9: the halo copy writes s[64] and s[65], but s[64] is also thread 63's own element (off by one: it should start at s[65])
__global__ void stencil1d(const float *in, float *out, int n) {
    __shared__ float s[64 + 2];
    int g = blockIdx.x * blockDim.x + threadIdx.x;
    int l = threadIdx.x + 1;
    s[l] = g < n ? in[g] : 0.0f;
    if (threadIdx.x < 2) s[blockDim.x + threadIdx.x] = in[blockIdx.x * blockDim.x + blockDim.x - 1 + threadIdx.x];   // BUG
    __syncthreads();
    if (g < n) out[g] = 0.25f * s[l - 1] + 0.5f * s[l] + 0.25f * s[l + 1];
}
