// kernelrace-args: --block-dim 64
// verdict: clean
// Second pass of a multi-block scan: add the scanned total of the preceding blocks to every element.
__global__ void add_block_sums(float *data, const float *block_sums, int n) {
    __shared__ float base;
    if (threadIdx.x == 0) base = blockIdx.x > 0 ? block_sums[blockIdx.x - 1] : 0.0f;
    __syncthreads();
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) data[i] += base;
}
