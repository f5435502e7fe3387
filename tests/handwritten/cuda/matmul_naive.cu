// kernelrace-args: --block-dim 8,8 --grid-dim 2,2
// verdict: clean
// Naive matrix multiply, one output element per thread.
__global__ void matmul_naive(const float *A, const float *B, float *C, int K) {
    int N = gridDim.x * blockDim.x;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    float sum = 0.0f;
    for (int k = 0; k < K; ++k) sum += A[row * K + k] * B[k * N + col];
    C[row * N + col] = sum;
}
