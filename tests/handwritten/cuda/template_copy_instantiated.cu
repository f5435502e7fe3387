// kernelrace-args: --block-dim 64
// verdict: clean
// A copy template explicitly instantiated for float and int.
template <typename T>
__global__ void copy_kernel(const T *src, T *dst, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) dst[i] = src[i];
}
template __global__ void copy_kernel<float>(const float *, float *, int);
template __global__ void copy_kernel<int>(const int *, int *, int);
