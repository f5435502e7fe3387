// A pointer moved by a byte offset, then cast back: the float* is advanced by bytes, not by floats.
__kernel void add(__global float *dst, __global const float *src, ulong offsetd) {
    dst = (__global float *)((__global char *)dst + offsetd);
    int i = get_global_id(0);
    dst[i] = src[i] + 1.0f;
}
