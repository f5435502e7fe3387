// Host code beside the kernels: main, dim3, the runtime API and a missing library header.
#include <cstdio>
#include <torch/extension.h>
#include <cuda_runtime.h>

extern cudaStream_t stream;

__global__ void __launch_bounds__(256) shift(const float *in, float *out, int n) {
    __shared__ float tile[256];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    tile[threadIdx.x] = i < n ? in[i] : 0.0f;
    if (i < n)
        out[i] = tile[(threadIdx.x + 1) % 256];   // expect: read-after-write
}

__global__ void copy(const float *in, float *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = in[i];
}

int main(int argc, char **argv) {
    float *a, *b;
    int n = 1 << 20;
    cudaMalloc(&a, n * sizeof(float));
    cudaMalloc(&b, n * sizeof(float));
    shift<<<dim3(n / 256), dim3(256)>>>(a, b, n);
    copy<<<n / 256, 256>>>(a, b, n);
    printf("%s\n", cudaGetErrorString(cudaGetLastError()));
    return 0;
}
