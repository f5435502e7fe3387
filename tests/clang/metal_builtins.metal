// The Metal compiler's builtins under a library's own wrappers: a shuffle's value is another lane's.
#include <metal_stdlib>
using namespace metal;

METAL_FUNC float my_abs(float x) { return __metal_fabs(x, __METAL_FAST_MATH__); }
METAL_FUNC uint lane_zero(uint v) { return __metal_simd_broadcast(v, ushort(0)); }

kernel void scatter(device float *out [[buffer(0)]], device const uint *idx [[buffer(1)]],
                    uint tid [[thread_position_in_grid]]) {
    uint slot = lane_zero(idx[tid]);
    out[slot] = my_abs(out[tid]);   // expect: write-after-write, write-after-read (every lane of a SIMD-group writes one slot)
}
