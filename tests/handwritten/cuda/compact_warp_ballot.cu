// kernelrace-args: --block-dim 64
// verdict: clean
// Warp-aggregated compaction: one atomic per warp, lanes find their offset with __ballot_sync and __popc.
__global__ void compact_warp(const int *in, int *out, int *count, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int lane = threadIdx.x & 31;
    bool keep = i < n && in[i] > 0;
    unsigned mask = __ballot_sync(0xffffffff, keep);
    int base = 0;
    if (lane == 0) base = atomicAdd(count, __popc(mask));
    base = __shfl_sync(0xffffffff, base, 0);
    if (keep) out[base + __popc(mask & ((1u << lane) - 1))] = in[i];
}
