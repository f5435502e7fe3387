// kernelrace-args: --block-dim 64
// verdict: race
// race: bins line 8: the global bin is incremented without an atomic
__global__ void histogram_global(const int *keys, int *bins, int nbins, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        int k = keys[i];
        if (k >= 0 && k < nbins) bins[k] += 1;   // BUG
    }
}
