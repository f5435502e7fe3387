// kernelrace-args: --block-dim 64
// verdict: clean
// Histogram straight into global memory with atomicAdd (the simple baseline).
__global__ void histogram_global(const int *keys, int *bins, int nbins, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        int k = keys[i];
        if (k >= 0 && k < nbins) atomicAdd(&bins[k], 1);
    }
}
