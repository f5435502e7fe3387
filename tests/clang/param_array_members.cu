// Arrays inside a `const` struct argument (`const __grid_constant__ cuda::std::array<int, 8> shape`,
// mlx; a `const Dims d` holding `int n[4]`): the argument's bytes, the same for every thread.
#include <cuda/std/array>
using Shape = cuda::std::array<int, 8>;

struct Dims {
    int n[4];
    long stride;
};

__device__ long loc(long e, const int *shape, const long *strides, int ndim) {
    long l = 0;
    for (int i = ndim - 1; i >= 0 && e > 0; --i) {
        l += (e % shape[i]) * strides[i];
        e /= shape[i];
    }
    return l;
}

// each thread its own output, reads anywhere: clean
__global__ void gather(const float *in, float *out, const __grid_constant__ Shape shape,
                       const __grid_constant__ cuda::std::array<long, 8> strides, int ndim) {
    long i = blockIdx.x * blockDim.x + threadIdx.x;
    out[i] = in[loc(i, shape.data(), strides.data(), ndim)];
}

// the row length is the last extent: blocks overlap where a block has more threads than it
__global__ void last_dim(float *out, const __grid_constant__ Shape shape, int ndim) {
    int n = shape[ndim - 1];
    if (ndim == shape.size()) {
        out[blockIdx.x * n + threadIdx.x] = threadIdx.x;
    }
}

// the same with a struct of our own: rows of d.n[1] elements, a block a row
__global__ void rows(float *out, const Dims d) {
    if (threadIdx.x < d.n[1]) {
        out[blockIdx.x * d.n[1] + threadIdx.x] = threadIdx.x;
    }
}

// rows of d.n[0] elements, d.n[1] threads writing each: rows overlap where d.n[1] > d.n[0]
__global__ void short_rows(float *out, const Dims d) {
    if (threadIdx.x < d.n[1]) {
        out[blockIdx.x * d.n[0] + threadIdx.x] = threadIdx.x;
    }
}

// a struct argument that is not const: each thread's own copy, which it may write (not modelled)
__global__ void own_copy(float *out, Dims d) {
    d.n[threadIdx.x % 4] = threadIdx.x;
    out[blockIdx.x * 4 + threadIdx.x % 4] = d.n[0];
}
