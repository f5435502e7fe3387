// 2-D positions as vector parameters: the grid position and the threadgroup position.
#include <metal_stdlib>
using namespace metal;

kernel void transpose_tile(device const float *in [[buffer(0)]],
                           device float *out [[buffer(1)]],
                           constant uint &width [[buffer(2)]],
                           uint2 gid [[thread_position_in_grid]],
                           ushort2 lid [[thread_position_in_threadgroup]],
                           uint2 size [[threads_per_grid]]) {
    threadgroup float tile[16][17];
    tile[lid.y][lid.x] = in[gid.y * size.x + gid.x];
    threadgroup_barrier(mem_flags::mem_threadgroup);
    out[gid.y * size.x + gid.x] = tile[lid.x][lid.y];
}

kernel void column_sum(device float *acc [[buffer(0)]],
                       uint2 pos [[thread_position_in_grid]]) {
    acc[pos.x] += 1.0f;   // expect: write-after-read (threads of one column)
}
