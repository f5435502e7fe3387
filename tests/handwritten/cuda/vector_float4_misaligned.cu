// kernelrace-args: --block-dim 64
// verdict: race
// race: out line 8: the float4 output is addressed through a float pointer at 2*i, so neighbouring threads' four-float stores overlap
__global__ void add4(const float4 *a, float *out, int n4) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n4) {
        float4 x = a[i];
        reinterpret_cast<float4 *>(out + 2 * i)[0] = x;   // BUG
    }
}
