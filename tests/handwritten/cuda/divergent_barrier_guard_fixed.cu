// kernelrace-args: --block-dim 64
// verdict: clean
// The early-return fixed: out-of-range threads load a zero and still reach the barrier.
__global__ void guarded(const float *in, float *out, int n) {
    __shared__ float s[64];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    s[threadIdx.x] = i < n ? in[i] : 0.0f;
    __syncthreads();
    if (i < n) out[i] = s[(threadIdx.x + 1) % 64];
}
