// A quoted toolkit header, half precision and a character literal; each thread owns its element.
#include "cuda_fp16.h"

__global__ void mark(__half *x, char *tag, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        x[i] = __float2half(__half2float(x[i]) * 2.0f);
        tag[i] = i % 2 ? '.' : '#';
    }
}
