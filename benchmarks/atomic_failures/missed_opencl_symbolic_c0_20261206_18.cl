// kernelrace-args:
// atomic campaign seed 20261206 kernel 18, shrunk: missed (symbolic) on c0
__kernel void k(__global int* dst, __global int* sink, __global atomic_int* c0) {
    int t0 = atomic_fetch_add_explicit(c0, 1, memory_order_relaxed, memory_scope_work_group);
    dst[(int)get_group_id(0)] = t0;
}
