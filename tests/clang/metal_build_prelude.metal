// Kernels that rely on what their build prepends (metal_build_prelude.h, given with --include):
// without it, CEIL_DIV is a function no file declares and `elem_t` no type, so both kernels are
// unknown; with it, `tiles` is clean (each thread its own tile) and `tiles_overlap` writes the
// first element of the next thread's tile too.
struct tile_args {
    int n;
    int per;
    edge_mode mode;
};

kernel void tiles(device elem_t *out [[buffer(0)]], constant tile_args &a [[buffer(1)]],
                  uint t [[thread_position_in_grid]]) {
    int count = CEIL_DIV(a.n, a.per);
    if ((int)t >= count) return;
    for (int k = 0; k < a.per; k++) {
        out[t * a.per + k] = a.mode == clamp_low ? 0.0f : 1.0f;
    }
}

kernel void tiles_overlap(device elem_t *out [[buffer(0)]], constant tile_args &a [[buffer(1)]],
                          uint t [[thread_position_in_grid]]) {
    int count = CEIL_DIV(a.n, a.per);
    if ((int)t >= count) return;
    for (int k = 0; k <= a.per; k++) {
        out[t * a.per + k] = (elem_t)t;   // expect: write-after-write (k = per is the next tile's first)
    }
}
