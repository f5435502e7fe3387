// Metal's matrices: built from columns or a diagonal, loaded from a buffer, a column read and written
// by index, and the products `m * v`, `v * m` and `m * n` (each lane the dot product it is). The
// values stored are exact: `same` stores one value from every thread (the product of the diagonal
// matrix with a vector that is not the thread's), `differs` a value of the thread's own.
#include <metal_stdlib>
using namespace metal;

kernel void same(device float4 *out [[buffer(0)]],
                 const device float4x4 *w [[buffer(1)]],
                 uint gid [[thread_position_in_grid]]) {
    float4x4 d = float4x4(2.0f);
    float4x4 m = float4x4(float4(1.0f, 0.0f, 0.0f, 0.0f), float4(0.0f, 1.0f, 0.0f, 0.0f),
                          float4(0.0f, 0.0f, 1.0f, 0.0f), float4(0.0f, 0.0f, 0.0f, 1.0f));
    float4x4 t;
    t[0] = m[1] * 3.0f;
    t[1] = m[0];
    t[2] = float4(0.0f);
    t[3] = float4(0.0f);
    t[3][3] = 1.0f;
    float4 v = float4(1.0f, 2.0f, 3.0f, 4.0f);
    out[0] = (d * m) * v + v * t;   // every thread the same value
    float4x4 u = w[gid];
    for (int i = 0; i < 4; ++i) {
        u[i] = u[i] * 3.0f;
    }
    out[gid + 1] = u * v + w[gid][1];
}

kernel void differs(device float4 *out [[buffer(0)]],
                    const device float4x4 *w [[buffer(1)]],
                    uint gid [[thread_position_in_grid]]) {
    float4x4 m = w[0];
    float4 v = float4(float(gid), 0.0f, 0.0f, 1.0f);
    out[0] = m * v;   // expect: write-after-write (the product of the thread's own vector)
}

kernel void columns(device float3x3 *p [[buffer(0)]],
                    device float2 *q [[buffer(1)]],
                    uint gid [[thread_position_in_grid]]) {
    p[gid][2] = float3(1.0f);   // bytes 32..43 of the thread's 48
    p[gid][1][2] = 2.0f;        // bytes 24..27
    q[gid] = float3x2(float2(1.0f), float2(2.0f), float2(0.0f)) * p[gid][0];
}

kernel void resized(device float3x3 *p [[buffer(0)]],
                    device float2 *q [[buffer(1)]],
                    uint gid [[thread_position_in_grid]]) {
    q[gid] = float3x2(p[gid]) * float3(1.0f);   // a 3x2 matrix of a 3x3 one: not modelled (unknown)
}

// In a template (its pattern read: clang resolves no operator there): `auto` holding a pointer and a
// matrix, `m * r` and `*p = OType(...)`, whose value is the thread's own (its vector operand's lanes).
template <typename IType, typename OType>
static inline void product_of(const device IType *in, device OType *out, uint gid) {
    auto p = out + 0;
    auto m = in[0];
    float4 r = float4(float(gid), 0.0f, 0.0f, 1.0f);
    *p = OType(m * r);   // expect: write-after-write
}

kernel void templated(const device float4x4 *in [[buffer(0)]],
                      device float4 *out [[buffer(1)]],
                      uint gid [[thread_position_in_grid]]) {
    product_of<float4x4, float4>(in, out, gid);
}
