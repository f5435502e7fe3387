// A sub-group's local id in OpenCL C read through clang: the kernel is unknown, naming it (the
// sub-group size and mapping are the implementation's; the collective itself is a value); the
// other kernel of the file is analysed (a race: every work-item writes out[0]).
kernel void rows_sum(global const float *in, global float *out, local float *part) {
    float s = sub_group_reduce_add(in[get_global_id(0)]);
    if (get_sub_group_local_id() == 0) part[get_sub_group_id()] = s;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (get_local_id(0) == 0) out[get_group_id(0)] = part[0];
}

kernel void last_writer(global float *out) {
    out[0] = get_global_id(0);
}
