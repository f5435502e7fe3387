// A SIMD-group matrix stored by the first simdgroup of every threadgroup: to one tile in `every_group`
// (the threadgroups' values are never taken equal: a race between threadgroups), to the threadgroup's
// own tile in `own_tile` (clean).
#include <metal_stdlib>
using namespace metal;

kernel void every_group(device const float *a [[buffer(0)]], device float *out [[buffer(1)]],
                        uint b [[threadgroup_position_in_grid]], uint sg [[simdgroup_index_in_threadgroup]]) {
    simdgroup_float8x8 m;
    simdgroup_load(m, a + b * 64, 8);
    if (sg == 0)
        simdgroup_store(m, out, 8);   // expect: write-after-write
}

kernel void own_tile(device const float *a [[buffer(0)]], device float *out [[buffer(1)]],
                     uint b [[threadgroup_position_in_grid]], uint sg [[simdgroup_index_in_threadgroup]]) {
    simdgroup_float8x8 m;
    simdgroup_load(m, a + b * 64, 8);
    if (sg == 0)
        simdgroup_store(m, out + b * 64, 8);
}
