// kernelrace-args: --block-dim 8,8 --grid-dim 2,2
// verdict: clean
// Copy through a shared tile (the transpose benchmark's baseline): each thread reads back its own element.
#define TILE_DIM 8
__global__ void copySharedMem(float *odata, const float *idata) {
    int width = gridDim.x * TILE_DIM, height = gridDim.y * TILE_DIM;
    __shared__ float tile[TILE_DIM * TILE_DIM];
    int x = blockIdx.x * TILE_DIM + threadIdx.x;
    int y = blockIdx.y * TILE_DIM + threadIdx.y;
    tile[threadIdx.y * TILE_DIM + threadIdx.x] = idata[y * width + x];
    __syncthreads();
    odata[y * width + x] = tile[threadIdx.y * TILE_DIM + threadIdx.x];
}
