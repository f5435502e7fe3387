// Swizzles in a header that declares a threadgroup array before them (metal_lib/staging.h): `rows`
// reads a neighbour's slot after the barrier (clean); `columns` has every row of threads store out[x].
#include <metal_stdlib>
#include "metal_lib/staging.h"
using namespace metal;

kernel void rows(device float *out [[buffer(0)]], device const float *in [[buffer(1)]],
                 uint2 pos [[thread_position_in_threadgroup]]) {
    copy_through_stage(out, in, pos, 16);
}

kernel void columns(device float *out [[buffer(0)]], uint2 pos [[thread_position_in_threadgroup]]) {
    column_sum(out, pos);
}
