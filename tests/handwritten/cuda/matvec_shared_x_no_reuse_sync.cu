// kernelrace-args: --block-dim 64
// verdict: race
// race: xs line 9: the chunk loop reloads xs without waiting for every thread to finish the previous chunk
__global__ void matvec(const float *A, const float *x, float *y, int ncols) {
    __shared__ float xs[64];
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    float sum = 0.0f;
    for (int c0 = 0; c0 < ncols; c0 += 64) {
        xs[threadIdx.x] = x[c0 + threadIdx.x];   // BUG
        __syncthreads();
        for (int j = 0; j < 64; ++j) sum += A[row * ncols + c0 + j] * xs[j];
    }
    y[row] = sum;
}
