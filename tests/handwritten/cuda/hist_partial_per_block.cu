// kernelrace-args: --block-dim 64
// verdict: clean
// Histogram in two passes: each block writes its own row of partial histograms (no global atomics).
#define BINS 64
__global__ void histogram_partial(const int *keys, unsigned int *partial, int n) {
    __shared__ unsigned int s_bins[BINS];
    s_bins[threadIdx.x] = 0;
    __syncthreads();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        atomicAdd(&s_bins[keys[i] & (BINS - 1)], 1u);
    __syncthreads();
    partial[blockIdx.x * BINS + threadIdx.x] = s_bins[threadIdx.x];
}
