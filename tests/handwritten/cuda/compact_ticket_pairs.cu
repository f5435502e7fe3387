// kernelrace-args: --block-dim 64
// verdict: race
// race: out line 9: each kept element writes two outputs but draws only one ticket, so out[slot + 1] is the next thread's out[slot]
__global__ void compact_pairs(const int *in, int *out, int *count, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && in[i] != 0) {
        int slot = atomicAdd(count, 1);
        out[slot] = i;
        out[slot + 1] = in[i];   // BUG
    }
}
