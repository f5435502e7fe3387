// A METAL_FUNC helper and metal:: names; the neighbour is read before anyone waits.
#include <metal_stdlib>
using namespace metal;

METAL_FUNC float relu(float v) { return metal::max(v, 0.0f); }

kernel void neighbour(device float *x [[buffer(0)]],
                      uint t [[thread_position_in_threadgroup]],
                      uint b [[threadgroup_position_in_grid]]) {
    threadgroup float s[64];
    s[t] = relu(x[b * 64 + t]);
    x[b * 64 + t] = s[(t + 1) % 64];   // expect: read-after-write
    metal::threadgroup_barrier(metal::mem_flags::mem_threadgroup);
}
