// kernelrace-args: --block-dim 1 --grid-dim 2
// atomic campaign seed 20261206 kernel 4, shrunk: false alarm (concrete) on dst
__kernel void k(__global int* dst, __global int* sink) {
    __local atomic_int c0;
    int t0 = atomic_load(&c0);
    int t1 = atomic_fetch_add(&c0, 1);
    dst[t0] = t1;
}
