// Vectors passed by value: each lane a parameter; one the kernel assigns is a local.
__kernel void shifted_copy(__global const float *src, __global float *dst, const int2 extent, uint2 pad) {
    const int x = get_global_id(0);
    if (x >= extent.x) return;
    pad.y += 1;
    dst[x] = src[x + pad.x + pad.y];
}

__kernel void folded(__global float *dst, const int2 extent) {
    const int x = get_global_id(0);
    dst[x % extent.y] = (float)x;
}
