// kernelrace-args: --block-dim 128
// verdict: race
// race: partial line 15: the barrier is a simdgroup barrier, which does not order the other simdgroups' partials
#include <metal_stdlib>
using namespace metal;
kernel void reduce_simd(device const float *in [[buffer(0)]], device float *out [[buffer(1)]],
                        uint tid [[thread_position_in_threadgroup]], uint gid [[thread_position_in_grid]],
                        uint bid [[threadgroup_position_in_grid]],
                        uint lane [[thread_index_in_simdgroup]], uint sg [[simdgroup_index_in_threadgroup]]) {
    threadgroup float partial[4];
    float v = simd_sum(in[gid]);
    if (lane == 0) partial[sg] = v;
    simdgroup_barrier(mem_flags::mem_threadgroup);
    if (sg == 0) {
        float w = lane < 4 ? partial[lane] : 0.0f;   // BUG
        w = simd_sum(w);
        if (lane == 0) out[bid] = w;
    }
}
