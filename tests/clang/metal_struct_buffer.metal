// Buffers bound as references to a struct holding a run-time sized array (the shape SPIRV-Cross
// gives a storage buffer): `out.data[i]` is element i of the buffer. `copy` is clean; `collect`
// has every thread write the struct's first element.
#include <metal_stdlib>
using namespace metal;

struct Words { uint data[1]; };
struct Shape { int4 size; };

kernel void copy(device Words &out [[buffer(0)]],
                 const device Words &in [[buffer(1)]],
                 constant Shape &shape [[buffer(2)]],
                 uint3 gid [[thread_position_in_grid]]) {
    int pos = int(gid.x);
    if (pos < shape.size.x)
        out.data[pos] = in.data[pos] + 1u;
}

kernel void collect(device Words &out [[buffer(0)]],
                    uint3 gid [[thread_position_in_grid]]) {
    out.data[0] = gid.x;   // expect: write-after-write
}
