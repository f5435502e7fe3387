// A typedef'd struct argument, INT_MAX and a required work-group size (the block's extents).
typedef struct { int n; float scale; } Params;

__kernel __attribute__((reqd_work_group_size(64, 1, 1)))
void scale(__global float *x, Params p) {
    __local float s[64];
    int l = get_local_id(0);
    int g = get_global_id(0);
    s[l] = g < p.n ? x[g] * p.scale : 0.0f;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (g < p.n && g < INT_MAX)
        x[g] = s[63 - l] + (float)'a';
}
