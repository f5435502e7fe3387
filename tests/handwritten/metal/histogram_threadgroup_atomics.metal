// kernelrace-args: --block-dim 64
// verdict: clean
// Histogram with threadgroup atomic bins copied out per threadgroup.
#include <metal_stdlib>
using namespace metal;
kernel void histogram(device const uint *keys [[buffer(0)]], device uint *bins [[buffer(1)]],
                      constant uint &n [[buffer(2)]],
                      uint tid [[thread_position_in_threadgroup]], uint gid [[thread_position_in_grid]],
                      uint bid [[threadgroup_position_in_grid]]) {
    threadgroup atomic_uint s_bins[64];
    atomic_store_explicit(&s_bins[tid], 0u, memory_order_relaxed);
    threadgroup_barrier(mem_flags::mem_threadgroup);
    if (gid < n) atomic_fetch_add_explicit(&s_bins[keys[gid] % 64], 1u, memory_order_relaxed);
    threadgroup_barrier(mem_flags::mem_threadgroup);
    uint c = atomic_load_explicit(&s_bins[tid], memory_order_relaxed);
    bins[bid * 64 + tid] = c;
}
