// kernelrace-args: --block-dim 64
// verdict: race
// race: s line 12: the scratch parameter is read by the tree step before the other threads stored into it (no first barrier)
#include <metal_stdlib>
using namespace metal;
kernel void reduce_param(device const float *in [[buffer(0)]], device float *out [[buffer(1)]],
                         threadgroup float *s [[threadgroup(0)]],
                         uint tid [[thread_position_in_threadgroup]], uint gid [[thread_position_in_grid]],
                         uint bid [[threadgroup_position_in_grid]]) {
    s[tid] = in[gid];
    for (uint k = 32; k > 0; k >>= 1) {
        if (tid < k) s[tid] += s[tid + k];   // BUG
        threadgroup_barrier(mem_flags::mem_threadgroup);
    }
    if (tid == 0) out[bid] = s[0];
}
