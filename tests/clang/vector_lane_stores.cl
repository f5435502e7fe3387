// Lanes of vectors in memory written one by one (`p[i].x = v`), in global memory and in a private
// array a helper fills through a pointer.
inline void fill(float2 *a, __local float *x, int n) {
    for (int i = 0; i < n; i++)
        a[i].x = x[i];
}

__kernel void private_pairs(__global float *out) {
    __local float s[64];
    float2 a[4];
    int t = get_local_id(0);
    s[t] = t;
    barrier(CLK_LOCAL_MEM_FENCE);
    fill(a, s, 4);
    out[get_global_id(0)] = a[0].x + a[3].x;
}

// Thread i writes .x of its own element and .y of the next: different bytes, clean.
__kernel void halves(__global float2 *p) {
    int i = get_global_id(0);
    p[i].x = 1.0f;
    p[i + 1].y = 2.0f;
}

// Thread i writes .x of the next element, which thread i + 1 writes too: a race.
__kernel void next_x(__global float2 *p) {
    int i = get_global_id(0);
    p[i].x = 1.0f;
    p[i + 1].x = 2.0f;
}
