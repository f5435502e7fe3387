// kernelrace-args: --block-dim 64
// verdict: clean
// 256-bin histogram: per-block bins in shared memory with atomicAdd, merged into global with atomicAdd.
#define BINS 256
__global__ void histogram_smem(const unsigned char *in, unsigned int *bins, int n) {
    __shared__ unsigned int s_bins[BINS];
    for (int i = threadIdx.x; i < BINS; i += blockDim.x) s_bins[i] = 0;
    __syncthreads();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        atomicAdd(&s_bins[in[i]], 1);
    __syncthreads();
    for (int i = threadIdx.x; i < BINS; i += blockDim.x) atomicAdd(&bins[i], s_bins[i]);
}
