// kernelrace-args: --block-dim 128
// verdict: clean
// Reduction 4 done right for independent thread scheduling: each warp step reads, syncs the warp, writes, syncs again.
__device__ void warpReduce(float *sdata, unsigned int tid) {
    float v = sdata[tid];
    for (int off = 32; off > 0; off >>= 1) {
        v += sdata[tid + off];
        __syncwarp();
        sdata[tid] = v;
        __syncwarp();
    }
}

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
    if (tid < 32) warpReduce(sdata, tid);
    if (tid == 0) g_odata[blockIdx.x] = sdata[0];
}
