// A work-item handles LROWS rows, a macro the build passes (-DLROWS=...): Lark reads the file but
// cannot use the undefined name as a number; clang makes it a symbolic parameter: auto takes clang's reading.
__kernel void rows(__global float *out, __global const float *in, int width) {
    int row0 = get_group_id(0) * LROWS;
    int col = get_local_id(0);
    for (int i = 0; i < LROWS; i++)
        out[(row0 + i) * width + col] = 2.0f * in[(row0 + i) * width + col];
}

// The same rows, each work-item also writing its right neighbour's element: a race.
__kernel void rows_overlap(__global float *out, int width) {
    int row0 = get_group_id(0) * LROWS;
    int col = get_local_id(0);
    for (int i = 0; i < LROWS; i++) {
        out[(row0 + i) * width + col] = 1.0f;
        out[(row0 + i) * width + col + 1] = 2.0f;
    }
}

// No macro: both front ends read it.
__kernel void copy(__global float *out, __global const float *in) {
    out[get_global_id(0)] = in[get_global_id(0)];
}
