// kernelrace-args: --block-dim 64
// verdict: race
// race: s line 12: the in-place step reads s[t - off] in the same interval in which its owner updates it
#include <metal_stdlib>
using namespace metal;
kernel void scan_hs(device const int *in [[buffer(0)]], device int *out [[buffer(1)]],
                    uint t [[thread_position_in_threadgroup]], uint gid [[thread_position_in_grid]]) {
    threadgroup int s[64];
    s[t] = in[gid];
    threadgroup_barrier(mem_flags::mem_threadgroup);
    for (uint off = 1; off < 64; off <<= 1) {
        if (t >= off) s[t] += s[t - off];   // BUG
        threadgroup_barrier(mem_flags::mem_threadgroup);
    }
    out[gid] = s[t];
}
