// kernelrace-args: --block-dim 64
// verdict: race
// race: out line 7: the helper forgets the block offset, so every block writes the same first blockDim.x outputs
__device__ int tid() { return threadIdx.x; }
__global__ void squares(const float *in, float *out, int n) {
    int i = tid();
    if (i < n) out[i] = in[blockIdx.x * blockDim.x + threadIdx.x] * 2.0f;   // BUG
}
