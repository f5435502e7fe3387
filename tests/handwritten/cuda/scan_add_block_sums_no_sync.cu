// kernelrace-args: --block-dim 64
// verdict: race
// race: base line 8: thread 0 publishes the block's base in shared memory, but the others read it without a barrier
__global__ void add_block_sums(float *data, const float *block_sums, int n) {
    __shared__ float base;
    if (threadIdx.x == 0) base = blockIdx.x > 0 ? block_sums[blockIdx.x - 1] : 0.0f;
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) data[i] += base;   // BUG
}
