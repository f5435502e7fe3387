// kernelrace-args: --scope block --block-dim 6,3,1
#include <metal_stdlib>
using namespace metal;
kernel void k(device float* g0 [[buffer(0)]], device float* g1 [[buffer(1)]], constant int& P0 [[buffer(2)]], constant int& P1 [[buffer(3)]], constant int& P2 [[buffer(4)]], uint3 tid [[thread_position_in_threadgroup]]) {
    threadgroup float s0[16];
    threadgroup float s1[8];
    for (int r0 = 1; r0 < 1; r0 += 3) {
        int w0 = 2;
        while (w0 < (P1 + 3)) {
            int i0 = (r0 - P2);
            w0 += (P0 + 1);
        }
        s0[(((3 % 1) & 26) % 16)] = (float)((((int)tid.x) + (((int)tid.y) * 6)));
    }
    for (int r1 = 3; r1 < (P1 + 3); r1 += 1) {
        int w1 = 0;
        while (w1 < P0) {
            threadgroup_barrier(mem_flags::mem_device | mem_flags::mem_threadgroup);
            w1 += 1;
        }
        s1[(2 & 7)] = 2.0f;
        g1[((P0 * 3) + P2)] = (float)((((int)tid.x) + (((int)tid.y) * 6)));
    }
    g1[7] = (float)((((int)tid.x) + (((int)tid.y) * 6)));
    int w2 = 1;
    while (w2 < 8) {
        if ((P0 & 26) != 7) {
            float f0 = g1[((P2 * 3) + ((int)tid.x))];
        }
        float f1 = s1[(w2 % 8)];
        w2 += (P1 + 1);
    }
}
