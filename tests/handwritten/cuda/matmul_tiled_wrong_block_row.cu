// kernelrace-args: --block-dim 8,8 --grid-dim 2,2
// verdict: race
// race: C line 20: the output row is computed from blockIdx.x instead of blockIdx.y, so blocks of one column write the same C tile
#define TILE 8
__global__ void matmul_tiled(const float *A, const float *B, float *C, int K) {
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE];
    int N = gridDim.x * TILE;
    int tx = threadIdx.x, ty = threadIdx.y;
    int row = blockIdx.x * TILE + ty, col = blockIdx.x * TILE + tx;
    float acc = 0.0f;
    for (int t = 0; t < K / TILE; ++t) {
        As[ty][tx] = A[row * K + t * TILE + tx];
        Bs[ty][tx] = B[(t * TILE + ty) * N + col];
        __syncthreads();
        for (int k = 0; k < TILE; ++k)
            acc += As[ty][k] * Bs[k][tx];
        __syncthreads();
    }
    C[row * N + col] = acc;   // BUG
}
