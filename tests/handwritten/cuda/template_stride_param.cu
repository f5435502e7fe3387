// kernelrace-args: --block-dim 64
// verdict: race
// race: data line 7: instantiated with STRIDE = 1, each thread reads data[i + 1], which the next thread overwrites
template <int STRIDE>
__global__ void pair_sum(float *data) {
    int i = (blockIdx.x * blockDim.x + threadIdx.x) * STRIDE;
    data[i] = data[i] + data[i + 1];   // BUG
}
template __global__ void pair_sum<1>(float *);
