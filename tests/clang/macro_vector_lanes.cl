// Vector components written inside a macro's argument (`ID(t.yx)`): the extents clang gives are the
// macro invocation's, so the accessor is read where it was spelled.
#define ID(x) (x)

// u = (t.y, t.x) = (lid, 0): every work-item writes out[0], a race.
__kernel void swapped(__global float *out) {
    int2 t = (int2)(0, get_local_id(0));
    int2 u = ID(t.yx);
    out[u.y] = get_local_id(0);
}

// u = (0, lid): each work-item its own element.
__kernel void swapped_own(__global float *out) {
    int2 t = (int2)(get_local_id(0), 0);
    int2 u = ID(t.yx);
    out[u.y] = get_local_id(0);
}

// One lane inside the macro: t.y = lid, each its own element.
__kernel void lane_in_macro(__global float *out) {
    int2 t = (int2)(0, get_local_id(0));
    out[ID(t.y)] = get_local_id(0);
}
