// kernelrace-args: --block-dim 64
// verdict: clean
// Compaction writing (index, value) pairs: the ticket is drawn in steps of 2.
__global__ void compact_pairs(const int *in, int *out, int *count, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && in[i] != 0) {
        int slot = atomicAdd(count, 2);
        out[slot] = i;
        out[slot + 1] = in[i];
    }
}
