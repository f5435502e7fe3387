// Pointers moved inside a loop and inside a branch. Each iteration starts where the last one left the
// pointer, and after an `if` the pointer is where the branch taken left it: `runs_overlap` writes eight
// elements from a start four apart (a race with the next work-item), `runs_apart` eight from a start
// eight apart (clean), and in `moved_on_odd` an odd work-item's store lands on the next one's element.
__kernel void runs_overlap(__global float *out) {
    __global float *p = out + get_global_id(0) * 4;
    for (int i = 0; i < 8; i++) {
        *p = (float)get_global_id(0);   // expect: write-after-write
        p += 1;
    }
}

__kernel void runs_apart(__global float *out, int n) {
    __global float *p = out + get_global_id(0) * 8;
    int i = 0;
    while (i < 8) {
        *p = (float)get_global_id(0);
        p++;
        i++;
    }
}

__kernel void moved_on_odd(__global float *out) {
    __global float *p = out + get_global_id(0) * 2;
    if (get_global_id(0) % 2 == 1)
        p += 2;
    *p = (float)get_global_id(0);   // expect: write-after-write
}
