// kernelrace-args: --block-dim 64
// verdict: race
// race: s line 8: the templated reverse reads the mirrored element before its owner is known to have stored it
template <int BS>
__global__ void reverse_block(const float *in, float *out) {
    __shared__ float s[BS];
    s[threadIdx.x] = in[blockIdx.x * BS + threadIdx.x];
    out[blockIdx.x * BS + threadIdx.x] = s[BS - 1 - threadIdx.x];   // BUG
}
template __global__ void reverse_block<64>(const float *, float *);
