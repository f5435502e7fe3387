// kernelrace-args: --block-dim 64
// verdict: race
// race: s_bins line 10: the shared bin is incremented with a plain ++, two threads with equal keys lose a count
#define BINS 64
__global__ void histogram_plain(const int *keys, int *bins, int n) {
    __shared__ int s_bins[BINS];
    s_bins[threadIdx.x] = 0;
    __syncthreads();
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) s_bins[keys[i] & (BINS - 1)]++;   // BUG
    __syncthreads();
    atomicAdd(&bins[threadIdx.x], s_bins[threadIdx.x]);
}
