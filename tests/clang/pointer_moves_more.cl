// More pointers moved under control flow, for both C-family front ends: a nested block's move
// stays after the block, a `for` update's move happens after the body, `do`, `continue`, `break`
// and `switch` leave the pointer where the path taken left it. Two moves are `unknown`: one a
// goto may skip, one to another buffer inside a loop.
__kernel void block_move(__global float *out) {
    __global float *p = out;
    { p += get_global_id(0); }
    *p = (float)get_global_id(0);   // each work-item its own element: clean
}

__kernel void stepped_in_update(__global float *out) {
    __global float *p = out + get_global_id(0) * 4;
    for (int i = 0; i < 8; ++i, ++p)
        *p = (float)get_global_id(0);   // expect: write-after-write
}

__kernel void do_runs(__global float *out) {
    __global float *p = out + get_global_id(0) * 2;
    int i = 0;
    do {
        *p = (float)get_global_id(0);   // expect: write-after-write
        p += 1;
        i++;
    } while (i < 3);
}

__kernel void continue_runs(__global float *out) {
    __global float *p = out + get_global_id(0) * 6;
    for (int i = 0; i < 8; i++) {
        p += 1;
        if (i % 2 == 0)
            continue;
        *p = (float)get_global_id(0);   // expect: write-after-write
    }
}

__kernel void break_then_store(__global float *out) {
    __global float *p = out + get_global_id(0) * 2;
    for (int i = 0; i < 8; i++) {
        p += 1;
        if (i == 1)
            break;
    }
    *p = (float)get_global_id(0);   // at 2 * (gid + 1): the next work-item's first element
    out[get_global_id(0) * 2] = (float)get_global_id(0);   // expect: write-after-write
}

__kernel void switch_move(__global float *out) {
    __global float *p = out + get_global_id(0) * 2;
    switch (get_global_id(0) % 2) {
    case 1:
        p += 2;
        break;
    default:
        break;
    }
    *p = (float)get_global_id(0);   // expect: write-after-write
}

__kernel void goto_skips_move(__global float *out) {
    __global float *p = out + get_global_id(0) * 2;
    if (get_global_id(0) % 2 == 1)
        goto done;
    p += 2;
done:
    *p = (float)get_global_id(0);   // even work-items at the next one's element: a race, or unknown
}

__kernel void another_buffer(__global float *a, __global float *b) {
    __global float *p = a + get_global_id(0);
    for (int i = 0; i < 2; i++) {
        *p = (float)get_global_id(0);
        p = b;
    }
}
