// kernelrace-args: --block-dim 64
// verdict: clean
// A device helper returning the global thread id, used to index the output.
__device__ int tid() { return blockIdx.x * blockDim.x + threadIdx.x; }
__device__ float square(float x) { return x * x; }
__global__ void squares(const float *in, float *out, int n) {
    int i = tid();
    if (i < n) out[i] = square(in[i]);
}
