// kernelrace-args: --block-dim 1 --grid-dim 2
// atomic campaign seed 20261206 kernel 4, shrunk: false alarm (concrete) on dst
extern "C" __global__ void k(int* dst, int* sink) {
    __shared__ int c0;
    int t0 = atomicAdd(&c0, 0);
    int t1 = atomicAdd(&c0, 1);
    dst[t0] = t1;
}
