// __ldg reads through the read-only cache: a read of the element; __FUNCTION__ is a string.
#include <cstdio>

__global__ void shifted(const float *in, float *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) { printf("%s: %d out of range\n", __FUNCTION__, i); return; }
    out[i] = __ldg(&in[i]) + __ldg(in + i + 1);
}

__global__ void in_place(float *data) {
    int i = threadIdx.x;
    data[i] = __ldg(&data[i + 1]);   // expect: write-after-read (the neighbour's element)
}
