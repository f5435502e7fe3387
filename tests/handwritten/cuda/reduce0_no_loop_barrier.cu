// kernelrace-args: --block-dim 64
// verdict: race
// race: sdata line 12: the barrier at the end of each step was dropped; the next step reads a partial sum another thread is still writing
__global__ void reduce0(const float *g_idata, float *g_odata, unsigned int n) {
    __shared__ float sdata[64];
    unsigned int tid = threadIdx.x;
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    sdata[tid] = (i < n) ? g_idata[i] : 0;
    __syncthreads();
    for (unsigned int s = 1; s < blockDim.x; s *= 2) {
        if ((tid % (2 * s)) == 0) {
            sdata[tid] += sdata[tid + s];   // BUG
        }
    }
    if (tid == 0) g_odata[blockIdx.x] = sdata[0];
}
