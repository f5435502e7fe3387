// kernelrace-args: --block-dim 2 --grid-dim 1
// atomic campaign seed 20261206 kernel 30, shrunk: witness (concrete) on dst
__kernel void k(__global int* dst, __global int* sink) {
    __local atomic_int c0;
    int t0 = atomic_load(&c0);
    dst[(-t0) / 2] = t0;
    sink[(int)get_global_id(0)] = dst[(int)get_local_id(0)];
}
