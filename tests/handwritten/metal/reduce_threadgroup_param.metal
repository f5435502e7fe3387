// kernelrace-args: --block-dim 64
// verdict: clean
// Tree reduction whose scratch is a threadgroup pointer parameter (setThreadgroupMemoryLength on the host).
#include <metal_stdlib>
using namespace metal;
kernel void reduce_param(device const float *in [[buffer(0)]], device float *out [[buffer(1)]],
                         threadgroup float *s [[threadgroup(0)]],
                         uint tid [[thread_position_in_threadgroup]], uint gid [[thread_position_in_grid]],
                         uint bid [[threadgroup_position_in_grid]]) {
    s[tid] = in[gid];
    threadgroup_barrier(mem_flags::mem_threadgroup);
    for (uint k = 32; k > 0; k >>= 1) {
        if (tid < k) s[tid] += s[tid + k];
        threadgroup_barrier(mem_flags::mem_threadgroup);
    }
    if (tid == 0) out[bid] = s[0];
}
