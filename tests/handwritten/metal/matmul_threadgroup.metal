// kernelrace-args: --block-dim 8,8 --grid-dim 2,2
// verdict: clean
// Tiled matrix multiply with threadgroup tiles.
#include <metal_stdlib>
using namespace metal;
constant uint TILE = 8;
kernel void matmul(device const float *A [[buffer(0)]], device const float *B [[buffer(1)]],
                   device float *C [[buffer(2)]], constant uint &K [[buffer(3)]],
                   uint2 lid [[thread_position_in_threadgroup]], uint2 tg [[threadgroup_position_in_grid]],
                   uint2 ntg [[threadgroups_per_grid]]) {
    threadgroup float As[8][8];
    threadgroup float Bs[8][8];
    uint N = ntg.x * TILE;
    uint row = tg.y * TILE + lid.y, col = tg.x * TILE + lid.x;
    float acc = 0.0f;
    for (uint t = 0; t < K / TILE; ++t) {
        As[lid.y][lid.x] = A[row * K + t * TILE + lid.x];
        Bs[lid.y][lid.x] = B[(t * TILE + lid.y) * N + col];
        threadgroup_barrier(mem_flags::mem_threadgroup);
        for (uint k = 0; k < TILE; ++k) acc += As[lid.y][k] * Bs[k][lid.x];
        threadgroup_barrier(mem_flags::mem_threadgroup);
    }
    C[row * N + col] = acc;
}
