// kernelrace-args: --block-dim 8,8 --grid-dim 2,2
// verdict: clean
// Transpose through a padded threadgroup tile.
#include <metal_stdlib>
using namespace metal;
kernel void transpose(device const float *in [[buffer(0)]], device float *out [[buffer(1)]],
                      uint2 lid [[thread_position_in_threadgroup]], uint2 tg [[threadgroup_position_in_grid]],
                      uint2 ntg [[threadgroups_per_grid]]) {
    threadgroup float tile[8][9];
    uint width = ntg.x * 8, height = ntg.y * 8;
    uint x = tg.x * 8 + lid.x, y = tg.y * 8 + lid.y;
    tile[lid.y][lid.x] = in[y * width + x];
    threadgroup_barrier(mem_flags::mem_threadgroup);
    x = tg.y * 8 + lid.x;
    y = tg.x * 8 + lid.y;
    out[y * height + x] = tile[lid.x][lid.y];
}
