// kernelrace-args: --block-dim 64
// verdict: race
// race: s_bins line 9: the bins are zeroed and then counted into with no barrier between: a zeroing store can wipe another thread's count
#define BINS 256
__global__ void histogram_smem(const unsigned char *in, unsigned int *bins, int n) {
    __shared__ unsigned int s_bins[BINS];
    for (int i = threadIdx.x; i < BINS; i += blockDim.x) s_bins[i] = 0;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        atomicAdd(&s_bins[in[i]], 1);   // BUG
    __syncthreads();
    for (int i = threadIdx.x; i < BINS; i += blockDim.x) atomicAdd(&bins[i], s_bins[i]);
}
