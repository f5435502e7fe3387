// kernelrace-args: --block-dim 64
// verdict: race
// race: s line 13: the barrier after the write was left out; the next step's read of s[t - offset] overtakes a neighbour's write
__global__ void scan_hs_inplace(const float *in, float *out) {
    __shared__ float s[64];
    int t = threadIdx.x;
    s[t] = in[blockIdx.x * 64 + t];
    __syncthreads();
    for (int offset = 1; offset < 64; offset <<= 1) {
        float left = 0.0f;
        if (t >= offset) left = s[t - offset];
        __syncthreads();
        s[t] += left;   // BUG
    }
    out[blockIdx.x * 64 + t] = s[t];
}
