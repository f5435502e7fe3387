// memset with no header included: nvcc's own headers declare it. Inside a template, on an array of
// the template's type, clang leaves the name to the instantiation.
template <typename T, int N>
__global__ void clear_then_sum(const T *in, T *out) {
    T acc[N];
    memset(acc, 0, sizeof(acc));
    for (int i = 0; i < N; i++)
        acc[i] += in[threadIdx.x * N + i];
    out[threadIdx.x] = acc[N - 1];
}

// The tile every thread clears, all of it, each with its own value (line 16), then reads.
template <typename T>
__global__ void clear_shared(T *out, int v) {
    __shared__ T tile[64];
    memset(tile, v + threadIdx.x, sizeof(tile));
    __syncthreads();
    out[threadIdx.x] = tile[threadIdx.x % 64];
}
