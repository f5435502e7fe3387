// A constant struct argument with vector members (`s.shape.x`), passed by reference to a helper that
// reads memory: the helper is inlined with the kernel's argument. `scale` is clean; `total` adds every
// thread's value into one element.
#include <metal_stdlib>
using namespace metal;

struct dims {
    int4 shape;
    int2 stride;
    float factor;
};

static inline float at(const device float *in, int x, int y, constant dims &s) {
    return x < s.shape.x && y < s.shape.y ? in[y * s.stride.x + x] : 0.0f;
}

kernel void scale(const device float *in [[buffer(0)]],
                  device float *out [[buffer(1)]],
                  constant dims &s [[buffer(2)]],
                  uint2 gid [[thread_position_in_grid]]) {
    if ((int)gid.x < s.shape.x && (int)gid.y < s.shape.y)
        out[(int)gid.y * s.shape.x + (int)gid.x] = at(in, gid.x, gid.y, s) * s.factor;
}

kernel void total(device float *out [[buffer(0)]],
                  constant dims &s [[buffer(1)]],
                  uint2 gid [[thread_position_in_grid]]) {
    out[s.stride.y] += float(gid.x);   // expect: write-after-read, write-after-write (one element)
}
