// kernelrace-args: --block-dim 8,8 --grid-dim 2,2
// verdict: clean
// Separable convolution, column pass: an 8x8 tile plus RADIUS rows above and below, loaded in three steps.
#define RADIUS 2
#define T 8
__constant__ float c_kernel[2 * RADIUS + 1];
__global__ void convolutionColumn(float *dst, const float *src) {
    __shared__ float s[T + 2 * RADIUS][T];
    int width = gridDim.x * T, height = gridDim.y * T;
    int x = blockIdx.x * T + threadIdx.x;
    int y = blockIdx.y * T + threadIdx.y;
    s[threadIdx.y + RADIUS][threadIdx.x] = src[y * width + x];
    if (threadIdx.y < RADIUS) {
        int up = y - RADIUS, down = y + T;
        s[threadIdx.y][threadIdx.x] = up >= 0 ? src[up * width + x] : 0.0f;
        s[threadIdx.y + T + RADIUS][threadIdx.x] = down < height ? src[down * width + x] : 0.0f;
    }
    __syncthreads();
    float sum = 0.0f;
    for (int k = -RADIUS; k <= RADIUS; ++k) sum += c_kernel[RADIUS + k] * s[threadIdx.y + RADIUS + k][threadIdx.x];
    dst[y * width + x] = sum;
}
