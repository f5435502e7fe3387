// A helper template called by its namespace-qualified name from a template kernel (`tile::load<N>(...)`),
// its explicit template arguments bound in order.
namespace tile {
template <int N>
__device__ void load(float *s, const float *g, int t) {
    s[t] = g[t * N];
}
}

template <int N>
__global__ void stage(const float *g, float *out) {
    __shared__ float s[256];
    tile::load<N>(s, g, threadIdx.x);
    __syncthreads();
    out[threadIdx.x] = s[255 - threadIdx.x];
}

// The same without the barrier: the read of the other end races with its load.
template <int N>
__global__ void stage_unsynced(const float *g, float *out) {
    __shared__ float s[256];
    tile::load<N>(s, g, threadIdx.x);
    out[threadIdx.x] = s[255 - threadIdx.x];
}
