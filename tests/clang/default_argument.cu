// A block reduction given its warp step as a template argument (a function), called with one of
// its default arguments (a float) left out.
typedef float (*step_fn)(float);

__device__ inline float warp_total(float v) {
    for (int d = 16; d > 0; d /= 2)
        v += __shfl_xor_sync(0xffffffff, v, d);
    return v;
}

template <step_fn step>
__device__ float block_total(float v, bool resync = false, float beyond = 0.0f) {
    __shared__ float per_warp[32];
    float w = step(v);
    if (threadIdx.x % 32 == 0) per_warp[threadIdx.x / 32] = w;
    __syncthreads();
    w = threadIdx.x < blockDim.x / 32 ? per_warp[threadIdx.x % 32] : beyond;
    float r = step(w);
    if (resync) __syncthreads();
    return r;
}

template <class T>
__global__ void sum_all(float *out, const T *in, unsigned n) {
    float s = 0;
    for (unsigned i = threadIdx.x; i < n; i += blockDim.x) s += (float)in[i];
    float r = block_total<warp_total>(s, true);
    if (threadIdx.x == 0) *out = r;
}
