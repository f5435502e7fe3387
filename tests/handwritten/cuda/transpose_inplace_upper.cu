// kernelrace-args: --block-dim 8,8 --grid-dim 2,2
// verdict: clean
// In-place transpose where only the thread above the diagonal swaps its pair.
__global__ void transposeInPlace(float *m, int width) {
    int x = blockIdx.x * 8 + threadIdx.x;
    int y = blockIdx.y * 8 + threadIdx.y;
    if (x < width && y < x) {
        float a = m[y * width + x];
        m[y * width + x] = m[x * width + y];
        m[x * width + y] = a;
    }
}
