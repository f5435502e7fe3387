// kernelrace-args: --block-dim 128
// verdict: clean
// Reduction 4 in the samples' newer form: the last warp reduces with __shfl_down_sync.
__global__ void reduce4(const float *g_idata, float *g_odata, unsigned int n) {
    __shared__ float sdata[128];
    unsigned int tid = threadIdx.x;
    unsigned int i = blockIdx.x * (blockDim.x * 2) + threadIdx.x;
    float mySum = (i < n) ? g_idata[i] : 0;
    if (i + blockDim.x < n) mySum += g_idata[i + blockDim.x];
    sdata[tid] = mySum;
    __syncthreads();
    for (unsigned int s = blockDim.x / 2; s > 32; s >>= 1) {
        if (tid < s) sdata[tid] = mySum = mySum + sdata[tid + s];
        __syncthreads();
    }
    if (tid < 32) {
        mySum += sdata[tid + 32];
        for (int offset = 16; offset > 0; offset /= 2)
            mySum += __shfl_down_sync(0xffffffff, mySum, offset);
    }
    if (tid == 0) g_odata[blockIdx.x] = mySum;
}
