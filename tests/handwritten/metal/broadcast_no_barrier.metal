// kernelrace-args: --block-dim 64
// verdict: race
// race: scale line 11: thread 0 computes a threadgroup-wide scale that the others read without a barrier
#include <metal_stdlib>
using namespace metal;
kernel void normalize(device const float *in [[buffer(0)]], device float *out [[buffer(1)]],
                      uint t [[thread_position_in_threadgroup]], uint gid [[thread_position_in_grid]],
                      uint bid [[threadgroup_position_in_grid]]) {
    threadgroup float scale;
    if (t == 0) scale = 1.0f / in[bid * 64];
    out[gid] = in[gid] * scale;   // BUG
}
