// A helper whose parameter is declared as an array (`uchar vals[4]`): a pointer, as C says; the
// helper is inlined with the caller's array.
inline void digits(unsigned int index, int base, unsigned char vals[4]) {
    vals[0] = index % base;
    index /= base;
    vals[1] = index % base;
}

// Private arrays filled by the helper: clean.
__kernel void keys(__global unsigned char *out, int base) {
    int i = get_global_id(0);
    unsigned char key[4] = {0, 0, 0, 0};
    digits(i, base, key);
    out[i] = key[0] + key[1];
}

inline void shift(__local float row[64], int l) {
    row[(l + 1) % 64] = row[l];
}

// The helper writes the neighbour's element of a local array that thread reads: a race.
__kernel void rotate(__global float *out) {
    __local float row[64];
    int l = get_local_id(0);
    row[l] = l;
    barrier(CLK_LOCAL_MEM_FENCE);
    shift(row, l);
    barrier(CLK_LOCAL_MEM_FENCE);
    out[get_global_id(0)] = row[l];
}
