// reqd_work_group_size naming macros the build passes (MNN's `reqd_work_group_size(MDIMC, NDIMC, 1)`):
// undefined, each is a symbolic parameter and the block's extent is its value; given with -D, a
// number. A work-group writes WX elements from its offset: apart under the attribute, colliding
// without it once a work-group holds more than WX work-items.
__kernel __attribute__((reqd_work_group_size(WX, 1, 1)))
void tiles_sized(__global float *out) {
    out[get_group_id(0) * WX + get_local_id(0)] = get_local_id(0);
}

__kernel void tiles_unsized(__global float *out) {
    out[get_group_id(0) * WX + get_local_id(0)] = get_local_id(0);
}
