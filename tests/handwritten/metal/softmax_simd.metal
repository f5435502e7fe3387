// kernelrace-args: --block-dim 32
// verdict: clean
// Row softmax, one simdgroup per row of 32, with simd_max and simd_sum.
#include <metal_stdlib>
using namespace metal;
kernel void softmax(device const float *x [[buffer(0)]], device float *y [[buffer(1)]],
                    uint lane [[thread_index_in_simdgroup]], uint row [[threadgroup_position_in_grid]]) {
    float v = x[row * 32 + lane];
    float m = simd_max(v);
    float e = exp(v - m);
    y[row * 32 + lane] = e / simd_sum(e);
}
