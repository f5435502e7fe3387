// kernelrace-args: --block-dim 64
// verdict: clean
// A device function template (clamp load) called from a kernel template instantiated for float.
template <typename T>
__device__ T load_clamped(const T *p, int i, int n) { return p[i < n ? i : n - 1]; }
template <typename T>
__global__ void smooth(const T *in, T *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = (load_clamped(in, i, n) + load_clamped(in, i + 1, n)) / 2;
}
template __global__ void smooth<float>(const float *, float *, int);
