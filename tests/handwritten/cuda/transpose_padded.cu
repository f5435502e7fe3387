// kernelrace-args: --block-dim 8,2 --grid-dim 2,2
// verdict: clean
// Transpose with a padded tile (TILE_DIM+1 columns) and BLOCK_ROWS rows per thread, as in the transpose sample.
#define TILE_DIM 8
#define BLOCK_ROWS 2
__global__ void transposeNoBankConflicts(float *odata, const float *idata) {
    int width = gridDim.x * TILE_DIM, height = gridDim.y * TILE_DIM;
    __shared__ float tile[TILE_DIM][TILE_DIM + 1];
    int x = blockIdx.x * TILE_DIM + threadIdx.x;
    int y = blockIdx.y * TILE_DIM + threadIdx.y;
    for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS)
        tile[threadIdx.y + j][threadIdx.x] = idata[(y + j) * width + x];
    __syncthreads();
    x = blockIdx.y * TILE_DIM + threadIdx.x;
    y = blockIdx.x * TILE_DIM + threadIdx.y;
    for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS)
        odata[(y + j) * height + x] = tile[threadIdx.x][threadIdx.y + j];
}
