// A template kernel checked with the arguments its host launch gives it.
#include "cuda_runtime.h"

template <int BS, typename T>
__global__ void rotate(T *data) {
    __shared__ T s[BS];
    s[threadIdx.x] = data[blockIdx.x * BS + threadIdx.x];
    data[blockIdx.x * BS + threadIdx.x] = s[(threadIdx.x + 1) % BS];   // expect: read-after-write
}

void run(float *d, int blocks) {
    rotate<128, float><<<blocks, 128>>>(d);
}
