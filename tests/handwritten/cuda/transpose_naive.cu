// kernelrace-args: --block-dim 8,8 --grid-dim 2,2
// verdict: clean
// Naive transpose: each thread copies one element, reading rows and writing columns.
#define TILE_DIM 8
__global__ void transposeNaive(float *odata, const float *idata) {
    int width = gridDim.x * TILE_DIM, height = gridDim.y * TILE_DIM;
    int x = blockIdx.x * TILE_DIM + threadIdx.x;
    int y = blockIdx.y * TILE_DIM + threadIdx.y;
    if (x < width && y < height)
        odata[x * height + y] = idata[y * width + x];
}
