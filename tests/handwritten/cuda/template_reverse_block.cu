// kernelrace-args: --block-dim 64
// verdict: clean
// Block-wise reverse through shared memory, templated on the block size and instantiated for 64.
template <int BS>
__global__ void reverse_block(const float *in, float *out) {
    __shared__ float s[BS];
    s[threadIdx.x] = in[blockIdx.x * BS + threadIdx.x];
    __syncthreads();
    out[blockIdx.x * BS + threadIdx.x] = s[BS - 1 - threadIdx.x];
}
template __global__ void reverse_block<64>(const float *, float *);
