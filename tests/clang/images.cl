// Images: a read-only image read as a value, texels written (each work-item its own, or all the
// same one), a read_write image read and written in place, and the extents queried.
__constant sampler_t nearest = CLK_NORMALIZED_COORDS_FALSE | CLK_ADDRESS_CLAMP_TO_EDGE | CLK_FILTER_NEAREST;

__kernel void blur_x(read_only image2d_t src, write_only image2d_t dst) {
    const int2 p = (int2)(get_global_id(0), get_global_id(1));
    if (p.x >= get_image_width(dst) || p.y >= get_image_height(dst)) return;
    float4 a = read_imagef(src, nearest, p - (int2)(1, 0));
    float4 b = read_imagef(src, nearest, p + (int2)(1, 0));
    write_imagef(dst, p, (a + b) * 0.5f);
}

__kernel void stamp(write_only image2d_t dst) {
    write_imagef(dst, (int2)(0, 0), (float4)(get_global_id(0)));
}

static void put(write_only image2d_t img, int2 at, float4 v) { write_imagef(img, at, v); }

__kernel void stamp_through_helper(write_only image2d_t dst) {
    put(dst, (int2)(get_global_id(0) / 2, 0), (float4)(get_global_id(0)));
}

__kernel void shift_in_place(read_write image2d_t img) {
    const int2 p = (int2)(get_global_id(0), get_global_id(1));
    float4 right = read_imagef(img, p + (int2)(1, 0));
    write_imagef(img, p, right);
}
