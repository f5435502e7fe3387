// kernelrace-args: --block-dim 64
// verdict: race
// race: sdata line 12: no barrier between the load into shared memory and the first tree step
__global__ void reduce1(const float *g_idata, float *g_odata, unsigned int n) {
    __shared__ float sdata[64];
    unsigned int tid = threadIdx.x;
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    sdata[tid] = (i < n) ? g_idata[i] : 0;
    for (unsigned int s = 1; s < blockDim.x; s *= 2) {
        int index = 2 * s * tid;
        if (index < blockDim.x) {
            sdata[index] += sdata[index + s];   // BUG
        }
        __syncthreads();
    }
    if (tid == 0) g_odata[blockIdx.x] = sdata[0];
}
