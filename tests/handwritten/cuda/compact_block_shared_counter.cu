// kernelrace-args: --block-dim 64
// verdict: clean
// Block-level compaction: slots from a shared counter, then one global atomic per block for the base.
__global__ void compact_block(const int *in, int *out, int *total, int n) {
    __shared__ int s_count;
    __shared__ int s_base;
    __shared__ int s_vals[64];
    if (threadIdx.x == 0) s_count = 0;
    __syncthreads();
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int v = i < n ? in[i] : 0;
    if (v > 0) {
        int local = atomicAdd(&s_count, 1);
        s_vals[local] = v;
    }
    __syncthreads();
    if (threadIdx.x == 0) s_base = atomicAdd(total, s_count);
    __syncthreads();
    if (threadIdx.x < s_count) out[s_base + threadIdx.x] = s_vals[threadIdx.x];
}
