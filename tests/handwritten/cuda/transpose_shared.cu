// kernelrace-args: --block-dim 8,8 --grid-dim 2,2
// verdict: clean
// Coalesced transpose through a shared tile (bank conflicts left in).
#define TILE_DIM 8
__global__ void transposeCoalesced(float *odata, const float *idata) {
    int width = gridDim.x * TILE_DIM, height = gridDim.y * TILE_DIM;
    __shared__ float tile[TILE_DIM][TILE_DIM];
    int x = blockIdx.x * TILE_DIM + threadIdx.x;
    int y = blockIdx.y * TILE_DIM + threadIdx.y;
    tile[threadIdx.y][threadIdx.x] = idata[y * width + x];
    __syncthreads();
    x = blockIdx.y * TILE_DIM + threadIdx.x;
    y = blockIdx.x * TILE_DIM + threadIdx.y;
    odata[y * height + x] = tile[threadIdx.x][threadIdx.y];
}
