// kernelrace-args: --block-dim 64
// verdict: clean
// threadFenceReduction style: partials, __threadfence, atomic ticket; the last block sums all partials (ordered by the fence and the ticket).
__device__ unsigned int retirementCount = 0;
__global__ void sum_last_block(const float *in, float *partials, float *result) {
    __shared__ bool amLast;
    __shared__ float s[64];
    s[threadIdx.x] = in[blockIdx.x * 64 + threadIdx.x];
    __syncthreads();
    for (int k = 32; k > 0; k >>= 1) {
        if (threadIdx.x < k) s[threadIdx.x] += s[threadIdx.x + k];
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        partials[blockIdx.x] = s[0];
        __threadfence();
        unsigned int ticket = atomicInc(&retirementCount, gridDim.x);
        amLast = (ticket == gridDim.x - 1);
    }
    __syncthreads();
    if (amLast && threadIdx.x == 0) {
        float total = 0.0f;
        for (int b = 0; b < gridDim.x; ++b) total += partials[b];
        *result = total;
    }
}
