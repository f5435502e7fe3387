// kernelrace-args: --block-dim 8,8 --grid-dim 2,2
// verdict: race
// race: m line 9: an in-place transpose where every thread swaps (x,y) with (y,x): both threads of a pair do the swap
__global__ void transposeInPlace(float *m, int width) {
    int x = blockIdx.x * 8 + threadIdx.x;
    int y = blockIdx.y * 8 + threadIdx.y;
    if (x < width && y < width) {
        float a = m[y * width + x];
        m[y * width + x] = m[x * width + y];   // BUG
        m[x * width + y] = a;
    }
}
