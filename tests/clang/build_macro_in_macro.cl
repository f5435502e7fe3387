// A macro the build passes (-DNROWS=...) used as a number inside another macro's definition, that
// macro invoked as a call (`AT(out, 2)`): the undefined name is a number, never a function, and
// becomes a symbolic parameter. Row q of a work-item is at (q - 1) * NROWS + its index: apart for
// every work-item while the global size is at most NROWS, colliding beyond it.
#define AT(p, q) (p[((q) - 1) * (NROWS) + get_global_id(0)])

__kernel void rows_apart(__global float *out) {
    if (get_global_id(0) < NROWS) {
        AT(out, 1) = 1.0f;
        AT(out, 2) = 2.0f;
    }
}

__kernel void rows_unguarded(__global float *out) {
    AT(out, 1) = 1.0f;
    AT(out, 2) = 2.0f;
}
