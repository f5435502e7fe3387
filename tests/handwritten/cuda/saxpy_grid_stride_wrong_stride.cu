// kernelrace-args: --block-dim 64
// verdict: race
// race: y line 6: the grid-stride loop steps by blockDim.x only, so the blocks' ranges overlap
__global__ void saxpy(int n, float a, const float *x, float *y) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x)
        y[i] = a * x[i] + y[i];   // BUG
}
