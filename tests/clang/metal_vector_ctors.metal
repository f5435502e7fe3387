// Metal's vector constructors: lanes from scalars and from other vectors, a splat, and the geometric
// functions that give a scalar. The index built from the constructed vector is exact: `flip` is clean,
// `overlap` writes one element from every thread of a row.
#include <metal_stdlib>
using namespace metal;

kernel void flip(device float4 *out [[buffer(0)]],
                 constant uint &width [[buffer(1)]],
                 uint2 gid [[thread_position_in_grid]]) {
    uint3 p = uint3(gid.yx, 0u);
    int2 q = int2(p.y, p.x);
    float3 w = float3(1.0f);
    float4 v = float4(w.xy, float(q.x), dot(w, w));
    if (any(gid >= uint2(width, width))) return;
    out[q.y * width + q.x] = v + float4(length(w));
}

kernel void overlap(device float *out [[buffer(0)]],
                    uint2 gid [[thread_position_in_grid]]) {
    int2 q = int2(gid.x, 0);
    out[q.y] = float(q.x);   // expect: write-after-write (every thread writes element 0)
}
