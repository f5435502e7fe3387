// A helper from a header that is not found: the kernel calling it is unknown, naming it; the other
// kernel is analysed.
#include "tile_helpers_not_here.cuh"

__global__ void uses_helper(float *x) {
    load_tile(x, threadIdx.x);
}

__global__ void plain(float *x) {
    x[blockIdx.x * blockDim.x + threadIdx.x] = 0.0f;
}
