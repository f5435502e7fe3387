// kernelrace-args: --block-dim 64
// verdict: race
// race: s_count line 12: thread 0 zeroes the shared counter with no barrier before the others atomically increment it
__global__ void compact_block(const int *in, int *out, int *total, int n) {
    __shared__ int s_count;
    __shared__ int s_base;
    __shared__ int s_vals[64];
    if (threadIdx.x == 0) s_count = 0;
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int v = i < n ? in[i] : 0;
    if (v > 0) {
        int local = atomicAdd(&s_count, 1);   // BUG
        s_vals[local] = v;
    }
    __syncthreads();
    if (threadIdx.x == 0) s_base = atomicAdd(total, s_count);
    __syncthreads();
    if (threadIdx.x < s_count) out[s_base + threadIdx.x] = s_vals[threadIdx.x];
}
