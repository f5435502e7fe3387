// kernelrace-args: --block-dim 8,8 --grid-dim 2,2
// verdict: race
// race: C line 8: C is indexed by the column only, so every row of threads accumulates into the same outputs
__global__ void matmul_naive(const float *A, const float *B, float *C, int K) {
    int N = gridDim.x * blockDim.x;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    for (int k = 0; k < K; ++k) C[col] += A[row * K + k] * B[k * N + col];   // BUG
}
