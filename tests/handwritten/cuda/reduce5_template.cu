// kernelrace-args: --block-dim 128
// verdict: clean
// Reduction 5: completely unrolled with a template block size, explicitly instantiated.
template <unsigned int blockSize>
__global__ void reduce5(const float *g_idata, float *g_odata, unsigned int n) {
    __shared__ float sdata[blockSize];
    unsigned int tid = threadIdx.x;
    unsigned int i = blockIdx.x * (blockSize * 2) + threadIdx.x;
    float mySum = (i < n) ? g_idata[i] : 0;
    if (i + blockSize < n) mySum += g_idata[i + blockSize];
    sdata[tid] = mySum;
    __syncthreads();
    if ((blockSize >= 512) && (tid < 256)) sdata[tid] = mySum = mySum + sdata[tid + 256];
    __syncthreads();
    if ((blockSize >= 256) && (tid < 128)) sdata[tid] = mySum = mySum + sdata[tid + 128];
    __syncthreads();
    if ((blockSize >= 128) && (tid < 64)) sdata[tid] = mySum = mySum + sdata[tid + 64];
    __syncthreads();
    if (tid < 32) {
        if (blockSize >= 64) mySum += sdata[tid + 32];
        for (int offset = 16; offset > 0; offset /= 2)
            mySum += __shfl_down_sync(0xffffffff, mySum, offset);
    }
    if (tid == 0) g_odata[blockIdx.x] = mySum;
}

template __global__ void reduce5<128>(const float *, float *, unsigned int);
