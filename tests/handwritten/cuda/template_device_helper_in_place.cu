// kernelrace-args: --block-dim 64
// verdict: race
// race: buf line 9: the smoothing template is instantiated in place (in == out): a thread reads buf[i + 1] which its neighbour writes
template <typename T>
__device__ T load_clamped(const T *p, int i, int n) { return p[i < n ? i : n - 1]; }
template <typename T>
__global__ void smooth_inplace(T *buf, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) buf[i] = (load_clamped(buf, i, n) + load_clamped(buf, i + 1, n)) / 2;   // BUG
}
template __global__ void smooth_inplace<float>(float *, int);
