// Helpers with a threadgroup array of their own: kernelrace reads this header rewritten (`static
// threadgroup`, longer than what it renames), and the swizzles after it must still read `.x` and `.y`.
#pragma once
#include <metal_stdlib>
using namespace metal;

METAL_FUNC void copy_through_stage(device float *out, device const float *in, uint2 pos, uint width) {
    threadgroup float stage[256];
    stage[pos.y * 16 + pos.x] = in[pos.y * width + pos.x];
    threadgroup_barrier(mem_flags::mem_threadgroup);
    out[pos.y * width + pos.x] = stage[pos.y * 16 + (pos.x + 1) % 16];
}

METAL_FUNC void column_sum(device float *out, uint2 pos) {
    threadgroup float stage[16 * (8 + 8)];   // (a size in parentheses)
    stage[pos.y * 16 + pos.x] = 1.0f;
    threadgroup_barrier(mem_flags::mem_threadgroup);
    out[pos.x] = stage[pos.y * 16 + pos.x] * pos.y;
}
