// kernelrace-args: --block-dim 64
// verdict: clean
// Hillis-Steele inclusive scan with two ping-pong buffers in shared memory.
__global__ void scan_hs(const float *g_in, float *g_out) {
    __shared__ float temp[2 * 64];
    int thid = threadIdx.x;
    int n = blockDim.x;
    int pout = 0, pin = 1;
    temp[pout * n + thid] = g_in[blockIdx.x * n + thid];
    __syncthreads();
    for (int offset = 1; offset < n; offset *= 2) {
        pout = 1 - pout;
        pin = 1 - pout;
        if (thid >= offset)
            temp[pout * n + thid] = temp[pin * n + thid] + temp[pin * n + thid - offset];
        else
            temp[pout * n + thid] = temp[pin * n + thid];
        __syncthreads();
    }
    g_out[blockIdx.x * n + thid] = temp[pout * n + thid];
}
