// kernelrace-args: --block-dim 64
// verdict: clean
// Thread 0 computes a threadgroup-wide scale; a barrier publishes it.
#include <metal_stdlib>
using namespace metal;
kernel void normalize(device const float *in [[buffer(0)]], device float *out [[buffer(1)]],
                      uint t [[thread_position_in_threadgroup]], uint gid [[thread_position_in_grid]],
                      uint bid [[threadgroup_position_in_grid]]) {
    threadgroup float scale;
    if (t == 0) scale = 1.0f / in[bid * 64];
    threadgroup_barrier(mem_flags::mem_threadgroup);
    out[gid] = in[gid] * scale;
}
