// kernelrace-args:
// atomic campaign seed 20261206 kernel 18, shrunk: missed (symbolic) on c0
extern "C" __global__ void k(int* dst, int* sink, int* c0) {
    int t0 = atomicAdd_block(c0, 1);
    dst[(int)blockIdx.x] = t0;
}
