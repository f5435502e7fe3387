// kernelrace-args: --block-dim 64
// verdict: clean
// Block reduction whose result is added to a single global total with atomicAdd.
__global__ void sum_atomic(const float *in, float *total, int n) {
    __shared__ float s[64];
    int tid = threadIdx.x;
    int i = blockIdx.x * blockDim.x + tid;
    s[tid] = i < n ? in[i] : 0.0f;
    __syncthreads();
    for (int k = 32; k > 0; k >>= 1) {
        if (tid < k) s[tid] += s[tid + k];
        __syncthreads();
    }
    if (tid == 0) atomicAdd(total, s[0]);
}
