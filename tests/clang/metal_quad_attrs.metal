// Quad-group positions and counts as parameters; a name written against its attribute (`lid[[...]]`).
// expect: barrier-scope (line 13: the barrier orders threadgroup memory only, out is device memory)
#include <metal_stdlib>
using namespace metal;

kernel void quad_lanes(device float *out [[buffer(0)]],
                       uint3 lid[[thread_position_in_threadgroup]],
                       uint quad [[quadgroup_index_in_threadgroup]],
                       uint lane [[thread_index_in_quadgroup]],
                       uint quads [[dispatch_quadgroups_per_threadgroup]]) {
    threadgroup float partial[256];
    partial[quad * 4 + lane] = out[lid[0]];
    threadgroup_barrier(mem_flags::mem_threadgroup);
    if (lane == 0 && quad < quads) out[quad] = partial[quad * 4 + 3];
}
