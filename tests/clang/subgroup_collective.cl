// OpenCL's sub-group functions read through clang: each sub-group a contiguous range of
// get_max_sub_group_size() work-items of the local linear id (a stated assumption), the size
// symbolic. One writer per sub-group into its own slot is clean, read back after a barrier
// (without it, a race); the slot chosen by the sub-group
// local id alone is shared by every sub-group (a race whenever a work-group holds two); the other
// kernel races on out[0].
kernel void rows_sum(global const float *in, global float *out, local float *part) {
    float s = sub_group_reduce_add(in[get_global_id(0)]);
    if (get_sub_group_local_id() == 0) part[get_sub_group_id()] = s;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (get_local_id(0) == 0) out[get_group_id(0)] = part[1];
}

kernel void rows_sum_unordered(global const float *in, global float *out, local float *part) {
    float s = sub_group_reduce_add(in[get_global_id(0)]);
    if (get_sub_group_local_id() == 0) part[get_sub_group_id()] = s;
    if (get_local_id(0) == 0) out[get_group_id(0)] = part[1];
}

kernel void lane_slots(global const float *in, local float *part) {
    part[get_sub_group_local_id()] = in[get_global_id(0)];
}

kernel void last_writer(global float *out) {
    out[0] = get_global_id(0);
}
