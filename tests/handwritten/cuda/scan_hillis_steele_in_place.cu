// kernelrace-args: --block-dim 64
// verdict: race
// race: s line 10: the in-place scan adds the element `offset` to the left while its owner may already have overwritten it this step
__global__ void scan_hs_inplace(const float *in, float *out) {
    __shared__ float s[64];
    int t = threadIdx.x;
    s[t] = in[blockIdx.x * 64 + t];
    __syncthreads();
    for (int offset = 1; offset < 64; offset <<= 1) {
        if (t >= offset) s[t] += s[t - offset];   // BUG
        __syncthreads();
    }
    out[blockIdx.x * 64 + t] = s[t];
}
