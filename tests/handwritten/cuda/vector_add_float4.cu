// kernelrace-args: --block-dim 64
// verdict: clean
// Vectorised add with float4 loads and stores.
__global__ void add4(const float4 *a, const float4 *b, float4 *c, int n4) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n4) {
        float4 x = a[i], y = b[i];
        c[i] = make_float4(x.x + y.x, x.y + y.y, x.z + y.z, x.w + y.w);
    }
}
