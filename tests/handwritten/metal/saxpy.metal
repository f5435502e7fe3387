// kernelrace-args: --block-dim 64
// verdict: clean
// Element-wise saxpy.
#include <metal_stdlib>
using namespace metal;
kernel void saxpy(device const float *x [[buffer(0)]], device float *y [[buffer(1)]],
                  constant float &a [[buffer(2)]], uint gid [[thread_position_in_grid]]) {
    y[gid] = a * x[gid] + y[gid];
}
