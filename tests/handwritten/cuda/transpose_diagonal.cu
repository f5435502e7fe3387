// kernelrace-args: --block-dim 8,8 --grid-dim 2,2
// verdict: clean
// Diagonal block reordering to avoid partition camping (square matrix).
#define TILE_DIM 8
__global__ void transposeDiagonal(float *odata, const float *idata) {
    __shared__ float tile[TILE_DIM][TILE_DIM + 1];
    int width = gridDim.x * TILE_DIM;
    int blockIdx_y = blockIdx.x;
    int blockIdx_x = (blockIdx.x + blockIdx.y) % gridDim.x;
    int xIndex = blockIdx_x * TILE_DIM + threadIdx.x;
    int yIndex = blockIdx_y * TILE_DIM + threadIdx.y;
    tile[threadIdx.y][threadIdx.x] = idata[yIndex * width + xIndex];
    __syncthreads();
    xIndex = blockIdx_y * TILE_DIM + threadIdx.x;
    yIndex = blockIdx_x * TILE_DIM + threadIdx.y;
    odata[yIndex * width + xIndex] = tile[threadIdx.x][threadIdx.y];
}
