// Function constants: a program-scope `constant bool ... [[function_constant(n)]]` the host sets
// when it builds the pipeline (a symbolic parameter), and an argument that exists only when it
// holds (`[[buffer(2), function_constant(has_bias)]]`). `add_bias` is clean; `tally` adds into one
// element from every thread when the constant holds.
#include <metal_stdlib>
using namespace metal;

constant bool has_bias [[function_constant(0)]];

kernel void add_bias(device float *out [[buffer(0)]],
                     const device float *in [[buffer(1)]],
                     const device float *bias [[buffer(2), function_constant(has_bias)]],
                     uint gid [[thread_position_in_grid]]) {
    float v = in[gid];
    if (has_bias)
        v += bias[gid];
    out[gid] = v;
}

kernel void tally(device float *out [[buffer(0)]],
                  uint gid [[thread_position_in_grid]]) {
    if (has_bias)
        out[0] += 1.0f;   // expect: write-after-read (when has_bias holds)
}

// A bool function constant is 0 or 1: `spread_bias` is clean (has_bias = -1 would send every thread
// to element 0).
kernel void spread_bias(device float *out [[buffer(0)]],
                        uint gid [[thread_position_in_grid]]) {
    out[gid * (has_bias + 1)] = float(gid);
}
