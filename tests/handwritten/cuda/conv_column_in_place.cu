// kernelrace-args: --block-dim 8,8 --grid-dim 2,2
// verdict: race
// race: img line 15: the column filter writes its result back into the image that neighbouring threads (and blocks) still read
#define RADIUS 2
__constant__ float c_kernel[2 * RADIUS + 1];
__global__ void convolutionColumnInPlace(float *img) {
    int width = gridDim.x * 8, height = gridDim.y * 8;
    int x = blockIdx.x * 8 + threadIdx.x;
    int y = blockIdx.y * 8 + threadIdx.y;
    float sum = 0.0f;
    for (int k = -RADIUS; k <= RADIUS; ++k) {
        int yy = min(max(y + k, 0), height - 1);
        sum += c_kernel[RADIUS + k] * img[yy * width + x];
    }
    img[y * width + x] = sum;   // BUG
}
