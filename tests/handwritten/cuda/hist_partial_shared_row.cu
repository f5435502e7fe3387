// kernelrace-args: --block-dim 64
// verdict: race
// race: partial line 12: the partial histogram row is indexed by the bin only, so every block writes the same row
#define BINS 64
__global__ void histogram_partial(const int *keys, unsigned int *partial, int n) {
    __shared__ unsigned int s_bins[BINS];
    s_bins[threadIdx.x] = 0;
    __syncthreads();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        atomicAdd(&s_bins[keys[i] & (BINS - 1)], 1u);
    __syncthreads();
    partial[threadIdx.x] = s_bins[threadIdx.x];   // BUG
}
