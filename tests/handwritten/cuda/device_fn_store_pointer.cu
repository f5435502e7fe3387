// kernelrace-args: --block-dim 64
// verdict: clean
// A device function storing through a pointer argument at the caller's index.
__device__ void put(float *dst, int i, float v) { dst[i] = v; }
__global__ void fill(float *out, float v, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) put(out, i, v + i);
}
