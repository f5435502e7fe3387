// A pointer argument that may be null (`master ? master + off : NULL`), tested before each use.
__device__ void update(float *w, float *master, size_t n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float old = (master != NULL) ? master[i] : w[i];
    w[i] = old * 0.5f;
    if (master != NULL) master[i] = old * 0.5f;
}

__global__ void update_slices(float *w, float *master, size_t n, ptrdiff_t stride) {
    update(w + blockIdx.y * stride, master ? master + blockIdx.y * stride : NULL, n);
}

__global__ void update_first(float *w, float *master, size_t n) {
    update(w, master ? master : NULL, n);
    if (master) master[0] = 1.0f;
}
