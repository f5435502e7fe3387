// Indices built with mad24/mul24 (products of 24-bit integers): each work-item its own element.
__kernel void scale_rows(__global float *out, __global const float *in, const int width) {
    const int x = get_global_id(0);
    const int y = get_global_id(1);
    if (x >= width) return;
    const int at = mad24(y, width, x);
    out[at] = in[at] * 2.0f;
}

__kernel void scale_rows_wrong(__global float *out, const int width) {
    const int x = get_global_id(0);
    const int y = get_global_id(1);
    out[mul24(y, width)] = (float)x;
}
