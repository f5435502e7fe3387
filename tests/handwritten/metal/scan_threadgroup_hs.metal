// kernelrace-args: --block-dim 64
// verdict: clean
// Hillis-Steele scan in threadgroup memory: read, barrier, write, barrier.
#include <metal_stdlib>
using namespace metal;
kernel void scan_hs(device const int *in [[buffer(0)]], device int *out [[buffer(1)]],
                    uint t [[thread_position_in_threadgroup]], uint gid [[thread_position_in_grid]]) {
    threadgroup int s[64];
    s[t] = in[gid];
    threadgroup_barrier(mem_flags::mem_threadgroup);
    for (uint off = 1; off < 64; off <<= 1) {
        int left = t >= off ? s[t - off] : 0;
        threadgroup_barrier(mem_flags::mem_threadgroup);
        s[t] += left;
        threadgroup_barrier(mem_flags::mem_threadgroup);
    }
    out[gid] = s[t];
}
