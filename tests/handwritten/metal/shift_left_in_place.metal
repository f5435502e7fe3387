// kernelrace-args: --block-dim 64
// verdict: race
// race: data line 7: each thread overwrites its element with its right neighbour's, which the neighbour is overwriting too
#include <metal_stdlib>
using namespace metal;
kernel void shift_left(device float *data [[buffer(0)]], uint gid [[thread_position_in_grid]]) {
    data[gid] = data[gid + 1];   // BUG
}
