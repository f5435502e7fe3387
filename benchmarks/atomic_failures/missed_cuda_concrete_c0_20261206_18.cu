// kernelrace-args: --block-dim 1 --grid-dim 2 --define P=0
// atomic campaign seed 20261206 kernel 18, shrunk: missed (concrete) on c0
extern "C" __global__ void k(int* dst, int* sink, int* c0, int P) {
    int t0 = atomicAdd_block(c0, 1);
    dst[P] = t0;
}
