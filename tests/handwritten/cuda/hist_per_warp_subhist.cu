// kernelrace-args: --block-dim 128
// verdict: clean
// Per-warp sub-histograms in shared memory (one row of bins per warp), summed by the block at the end.
#define BINS 32
#define WARPS 4
__global__ void histogram_warps(const unsigned int *data, unsigned int *bins, int n) {
    __shared__ unsigned int s_hist[WARPS * BINS];
    int warp = threadIdx.x / 32;
    s_hist[threadIdx.x] = 0;
    __syncthreads();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        atomicAdd(&s_hist[warp * BINS + (data[i] % BINS)], 1u);
    __syncthreads();
    if (threadIdx.x < BINS) {
        unsigned int sum = 0;
        for (int w = 0; w < WARPS; ++w) sum += s_hist[w * BINS + threadIdx.x];
        atomicAdd(&bins[threadIdx.x], sum);
    }
}
