// kernelrace-args: --block-dim 64
// verdict: race
// race: s_bins line 12: the threadgroup bins are incremented with a plain read-modify-write
#include <metal_stdlib>
using namespace metal;
kernel void histogram(device const uint *keys [[buffer(0)]], device uint *bins [[buffer(1)]],
                      uint tid [[thread_position_in_threadgroup]], uint gid [[thread_position_in_grid]],
                      uint bid [[threadgroup_position_in_grid]]) {
    threadgroup uint s_bins[64];
    s_bins[tid] = 0;
    threadgroup_barrier(mem_flags::mem_threadgroup);
    s_bins[keys[gid] % 64] += 1;   // BUG
    threadgroup_barrier(mem_flags::mem_threadgroup);
    bins[bid * 64 + tid] = s_bins[tid];
}
