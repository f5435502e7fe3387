// Initialisers C++ gives ext_vector types no form for, and packed vectors: `int2 at(x, y)` (a vector
// variable direct-initialised), `uint n{v}` and `int z{}` (a scalar in braces), a packed_float3
// buffer (12 bytes an element, not a float3's 16) and a packed_uint2 constant. A prototype at file
// scope, `float4 blend(float4, float4);`, stays a function's.
#include <metal_stdlib>
using namespace metal;

float4 blend(float4, float4);   // a prototype with unnamed parameters: no variable to initialise

kernel void rows(device float *out [[buffer(0)]], uint i [[thread_position_in_grid]]) {
    const int2 at(i % 4, i / 4);
    uint row{at.y * 4u};
    int z{};
    out[row + at.x + z] = (float)i;   // clean: element i is thread i's
}

kernel void rows_shifted(device float *out [[buffer(0)]], constant uint &width [[buffer(1)]],
                         uint2 g [[thread_position_in_grid]]) {
    const int2 at(g.x / 2, g.y);
    uint row{at.y * width};
    out[row + at.x] = (float)g.x;   // expect: write-after-write (threads 2k and 2k+1)
}

kernel void packed(device packed_float3 *pts [[buffer(0)]], constant packed_uint2 &dims [[buffer(1)]],
                   uint i [[thread_position_in_grid]]) {
    if (i >= dims.x) return;
    device float *words = (device float *)pts;
    pts[i].y = 1.0f;
    words[3 * i + 2] = (float)i;   // clean: word 3i+2 is element i's z (with 16-byte elements, thread 5's
                                   // word 17 would be thread 4's y)
}

kernel void packed_overlap(device packed_float3 *pts [[buffer(0)]], uint i [[thread_position_in_grid]]) {
    device float *words = (device float *)pts;
    words[3 * i + 3] = (float)i;   // expect: write-after-write with the next thread's x
    pts[i].x = 1.0f;
}
