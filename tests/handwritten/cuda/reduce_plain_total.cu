// kernelrace-args: --block-dim 64
// verdict: race
// race: total line 14: every block's thread 0 does a plain read-modify-write of the single total
__global__ void sum_plain(const float *in, float *total, int n) {
    __shared__ float s[64];
    int tid = threadIdx.x;
    int i = blockIdx.x * blockDim.x + tid;
    s[tid] = i < n ? in[i] : 0.0f;
    __syncthreads();
    for (int k = 32; k > 0; k >>= 1) {
        if (tid < k) s[tid] += s[tid + k];
        __syncthreads();
    }
    if (tid == 0) *total += s[0];   // BUG
}
