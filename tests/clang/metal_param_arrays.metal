// Array members of a struct given as a constant argument (`constant shape_args &a`): each element a
// uniform parameter, a variable index selecting among them. `scatter_rows` writes element 2t or
// 2t + 1 after a.dims[1] (clean); `scatter_cols` steps by a.stride[k] with k from the thread, where
// some strides put two threads on one element.
#include <metal_stdlib>
using namespace metal;

struct shape_args {
    int n;
    int dims[2];
    int stride[2];
};

kernel void scatter_rows(device float *out [[buffer(0)]], constant shape_args &a [[buffer(1)]],
                         uint t [[thread_position_in_grid]]) {
    if ((int)t >= a.dims[0]) return;
    out[a.dims[1] + 2 * t + (a.stride[t % 2] > 0 ? 1 : 0)] = (float)t;   // clean: 2t or 2t+1, past dims[1]
}

kernel void scatter_cols(device float *out [[buffer(0)]], constant shape_args &a [[buffer(1)]],
                         uint t [[thread_position_in_grid]]) {
    if ((int)t >= a.n) return;
    out[(t / 2) * a.stride[t % 2] + t] = (float)t;   // expect: write-after-write (e.g. stride[0] = 3)
}
