// kernelrace-args: --block-dim 8,8 --grid-dim 2,2
// verdict: race
// race: As line 13: the A tile is stored transposed (As[tx][ty]) but the second barrier was removed as "unneeded"
#define TILE 8
__global__ void matmul_tiled(const float *A, const float *B, float *C, int K) {
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE];
    int N = gridDim.x * TILE;
    int tx = threadIdx.x, ty = threadIdx.y;
    int row = blockIdx.y * TILE + ty, col = blockIdx.x * TILE + tx;
    float acc = 0.0f;
    for (int t = 0; t < K / TILE; ++t) {
        As[tx][ty] = A[row * K + t * TILE + tx];   // BUG
        Bs[ty][tx] = B[(t * TILE + ty) * N + col];
        __syncthreads();
        for (int k = 0; k < TILE; ++k)
            acc += As[k][ty] * Bs[k][tx];
    }
    C[row * N + col] = acc;
}
