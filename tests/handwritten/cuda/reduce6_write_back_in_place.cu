// kernelrace-args: --block-dim 64
// verdict: race
// race: g_idata line 20: the block result is written back into the input at index blockIdx.x, which another block may still be reading
__global__ void reduce6(float *g_idata, unsigned int n) {
    __shared__ float sdata[64];
    unsigned int tid = threadIdx.x;
    unsigned int gridSize = blockDim.x * gridDim.x;
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    float mySum = 0;
    while (i < n) {
        mySum += g_idata[i];
        i += gridSize;
    }
    sdata[tid] = mySum;
    __syncthreads();
    for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s) sdata[tid] = mySum = mySum + sdata[tid + s];
        __syncthreads();
    }
    if (tid == 0) g_idata[blockIdx.x] = mySum;   // BUG
}
