// kernelrace-args: --block-dim 8,8 --grid-dim 2,2
// verdict: clean
// Two tiles per block through one shared tile, with the barrier before the tile is reused.
#define TILE_DIM 8
__global__ void transposeTwoTiles(float *odata, const float *idata) {
    __shared__ float tile[TILE_DIM][TILE_DIM + 1];
    int width = gridDim.x * TILE_DIM * 2, height = gridDim.y * TILE_DIM;
    for (int t = 0; t < 2; ++t) {
        int bx = blockIdx.x * 2 + t;
        int x = bx * TILE_DIM + threadIdx.x;
        int y = blockIdx.y * TILE_DIM + threadIdx.y;
        tile[threadIdx.y][threadIdx.x] = idata[y * width + x];
        __syncthreads();
        x = blockIdx.y * TILE_DIM + threadIdx.x;
        y = bx * TILE_DIM + threadIdx.y;
        odata[y * height + x] = tile[threadIdx.x][threadIdx.y];
        __syncthreads();
    }
}
