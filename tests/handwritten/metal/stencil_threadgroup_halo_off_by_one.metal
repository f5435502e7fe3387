// kernelrace-args: --block-dim 64
// verdict: race
// race: s line 10: thread 0 stores both halo elements and puts the right one at s[64] (off by one), where thread 63 stores its own element
#include <metal_stdlib>
using namespace metal;
kernel void stencil(device const float *in [[buffer(0)]], device float *out [[buffer(1)]],
                    uint t [[thread_position_in_threadgroup]], uint gid [[thread_position_in_grid]]) {
    threadgroup float s[66];
    s[t + 1] = in[gid + 1];
    if (t == 0) { s[0] = in[gid]; s[64] = in[gid + 65]; }   // BUG
    threadgroup_barrier(mem_flags::mem_threadgroup);
    out[gid] = 0.25f * s[t] + 0.5f * s[t + 1] + 0.25f * s[t + 2];
}
