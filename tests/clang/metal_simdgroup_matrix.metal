// SIMD-group matrices: register-only values; simdgroup_load/simdgroup_store move an 8x8 tile, each
// lane two of its elements. `tiles` gives each simdgroup its own tile of threadgroup memory and reads
// a neighbour's only after the barrier (clean); `shared_tile` has every simdgroup store the same
// 64 elements of the output.
#include <metal_stdlib>
using namespace metal;

kernel void tiles(device const float *a [[buffer(0)]],
                  device float *out [[buffer(1)]],
                  uint sg [[simdgroup_index_in_threadgroup]],
                  uint b [[threadgroup_position_in_grid]]) {
    threadgroup float stage[4 * 64];
    simdgroup_float8x8 m;
    simdgroup_float8x8 acc = make_filled_simdgroup_matrix<float, 8>(0.0f);
    simdgroup_load(m, a + (b * 4 + sg) * 64, 8);
    simdgroup_multiply_accumulate(acc, m, m, acc);
    simdgroup_store(acc, stage + sg * 64, 8);
    threadgroup_barrier(mem_flags::mem_threadgroup);
    simdgroup_load(m, stage + ((sg + 1) % 4) * 64, 8, ulong2(0, 0), true);
    simdgroup_store(m, out + (b * 4 + sg) * 64, 8);
}

kernel void shared_tile(device float *out [[buffer(0)]],
                        uint b [[threadgroup_position_in_grid]]) {
    simdgroup_half8x8 z = make_filled_simdgroup_matrix<half, 8>(0.0h);
    simdgroup_store(z, out + b * 64, 8);   // expect: write-after-write (every simdgroup of a block)
}
