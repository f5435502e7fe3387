// kernelrace-args: --block-dim 64
// verdict: race
// race: barrier line 9: threads past n return early and never reach the barrier the others wait at
__global__ void guarded(const float *in, float *out, int n) {
    __shared__ float s[64];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    s[threadIdx.x] = in[i];
    __syncthreads();   // BUG
    out[i] = s[(threadIdx.x + 1) % 64];
}
