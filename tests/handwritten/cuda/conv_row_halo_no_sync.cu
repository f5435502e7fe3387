// kernelrace-args: --block-dim 64
// verdict: race
// race: s line 17: the convolution reads neighbours' and halo elements of the tile with no barrier after loading it
#define RADIUS 4
__constant__ float c_kernel[2 * RADIUS + 1];
__global__ void convolutionRow(float *dst, const float *src) {
    int width = gridDim.x * 64;
    __shared__ float s[64 + 2 * RADIUS];
    int x = blockIdx.x * 64 + threadIdx.x;
    int row = blockIdx.y * width;
    s[threadIdx.x + RADIUS] = src[row + x];
    if (threadIdx.x < RADIUS) {
        s[threadIdx.x] = x >= RADIUS ? src[row + x - RADIUS] : 0.0f;
        s[threadIdx.x + 64 + RADIUS] = x + 64 < width ? src[row + x + 64] : 0.0f;
    }
    float sum = 0.0f;
    for (int k = -RADIUS; k <= RADIUS; ++k) sum += c_kernel[RADIUS + k] * s[threadIdx.x + RADIUS + k];   // BUG
    dst[row + x] = sum;
}
