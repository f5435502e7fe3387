// kernelrace-args: --block-dim 2 --grid-dim 1
// atomic campaign seed 43 kernel 20, shrunk: false alarm (concrete) on dst
__kernel void k(__global int* dst, __global int* sink, __global atomic_int* c0, __global atomic_int* c1) {
    int t0 = atomic_fetch_add(c0, 0);
    int t1 = atomic_fetch_add(c1, 1);
    dst[t1] = t0;
    dst[(int)get_local_id(0)] = t0;
}
