// An object of a class a type parameter names, built by its constructor (flash-attention's
// `Reducer reducer(params, ...)` of `typename Ktraits::Reducer`): which class it is, and what its
// constructor and methods touch, is the instantiation's; no launch in the file names one.
template <typename Traits>
__global__ void reduce_rows(float *out, int n) {
    using Reducer = typename Traits::Reducer;
    extern __shared__ char smem[];
    Reducer reducer(n, threadIdx.x, smem);
    out[blockIdx.x * blockDim.x + threadIdx.x] = reducer.allreduce(1.0f);
}

__global__ void plain(float *out) {
    out[blockIdx.x * blockDim.x + threadIdx.x] = 1.0f;
}
