// Texture fetches are values (texture memory is read-only to kernels); a surface write is unknown.
texture<float, 2> heights;

__global__ void sample_ref(float *out, int w) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
    if (x < w) out[y * w + x] = tex2D(heights, x + 0.5f, y + 0.5f);
}

__global__ void sample_object(float4 *out, cudaTextureObject_t tex, uint n) {
    uint i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = tex1Dfetch<float4>(tex, i);
}

__global__ void paint(cudaSurfaceObject_t surf, int w) {
    int x = threadIdx.x;
    surf2Dwrite(1.0f, surf, x * 4, 0);
}
