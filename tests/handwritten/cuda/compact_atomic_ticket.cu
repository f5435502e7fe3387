// kernelrace-args: --block-dim 64
// verdict: clean
// Stream compaction with an atomic ticket: every kept element draws a distinct output slot.
__global__ void compact(const int *in, int *out, int *count, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && in[i] != 0) {
        int slot = atomicAdd(count, 1);
        out[slot] = in[i];
    }
}
