// kernelrace-args: --block-dim 64
// verdict: race
// race: barrier line 13: the loop's barrier was moved inside `if (tid < s)`, so only some threads reach it
__global__ void reduce2(const float *g_idata, float *g_odata, unsigned int n) {
    __shared__ float sdata[64];
    unsigned int tid = threadIdx.x;
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    sdata[tid] = (i < n) ? g_idata[i] : 0;
    __syncthreads();
    for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s) {
            sdata[tid] += sdata[tid + s];
            __syncthreads();   // BUG
        }
    }
    if (tid == 0) g_odata[blockIdx.x] = sdata[0];
}
