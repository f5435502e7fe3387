// kernelrace-args: --block-dim 64
// verdict: clean
// Reduction 6: each thread first sums a grid-stride range, then the block reduces in shared memory.
__global__ void reduce6(const float *g_idata, float *g_odata, unsigned int n) {
    __shared__ float sdata[64];
    unsigned int tid = threadIdx.x;
    unsigned int gridSize = blockDim.x * 2 * gridDim.x;
    unsigned int i = blockIdx.x * blockDim.x * 2 + threadIdx.x;
    float mySum = 0;
    while (i < n) {
        mySum += g_idata[i];
        if (i + blockDim.x < n) mySum += g_idata[i + blockDim.x];
        i += gridSize;
    }
    sdata[tid] = mySum;
    __syncthreads();
    for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s) sdata[tid] = mySum = mySum + sdata[tid + s];
        __syncthreads();
    }
    if (tid == 0) g_odata[blockIdx.x] = mySum;
}
