// kernelrace-args: --block-dim 64
// verdict: race
// race: count line 8: the output counter is bumped with a plain read and write instead of an atomic
__global__ void compact(const int *in, int *out, int *count, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && in[i] != 0) {
        int slot = *count;
        *count = slot + 1;   // BUG
        out[slot] = in[i];
    }
}
