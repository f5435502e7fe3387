// kernelrace-args: --block-dim 1 --grid-dim 2
// atomic campaign seed 20261206 kernel 4, shrunk: false alarm (concrete) on dst
#include <metal_stdlib>
using namespace metal;
kernel void k(device int* dst [[buffer(0)]], device int* sink [[buffer(1)]], uint3 tid [[thread_position_in_threadgroup]], uint3 bid [[threadgroup_position_in_grid]], uint gid [[thread_position_in_grid]]) {
    threadgroup atomic_int c0;
    int t0 = atomic_load_explicit(&c0, memory_order_relaxed);
    int t1 = atomic_fetch_add_explicit(&c0, 1, memory_order_relaxed);
    dst[t0] = t1;
}
