// A local whose address a helper is given (`reduce_pair(&total, ...)`, which subscripts it): the local
// lives in private memory, each use an access of it. `pair_sum` is clean (the helper's threadgroup
// exchange is fenced); `pair_sum_unfenced` reads the neighbour's slot before a barrier; `own_slot` writes
// the element whose index the helper stored in the local.
#include <metal_stdlib>
using namespace metal;

inline void reduce_pair(thread float *x, threadgroup float *xs, uint lane) {
    xs[lane] = x[0];
    threadgroup_barrier(mem_flags::mem_threadgroup);
    x[0] = xs[lane] + xs[lane ^ 1];
}

inline void reduce_pair_unfenced(thread float *x, threadgroup float *xs, uint lane) {
    xs[lane] = x[0];
    x[0] = xs[lane] + xs[lane ^ 1];   // expect: read-after-write (the neighbour's slot, no barrier)
}

inline void put_index(thread uint *at, uint v) {
    at[0] = v;
}

kernel void pair_sum(device float *out [[buffer(0)]], uint t [[thread_position_in_grid]],
                     uint l [[thread_index_in_threadgroup]]) {
    threadgroup float slots[64];
    float total = out[t];
    reduce_pair(&total, slots, l);
    out[t] = total;   // clean
}

kernel void pair_sum_unfenced(device float *out [[buffer(0)]], uint t [[thread_position_in_grid]],
                              uint l [[thread_index_in_threadgroup]]) {
    threadgroup float slots[64];
    float total = out[t];
    reduce_pair_unfenced(&total, slots, l);
    out[t] = total;
}

kernel void own_slot(device float *out [[buffer(0)]], uint t [[thread_position_in_grid]]) {
    uint at = 0;
    put_index(&at, t);
    out[at] = (float)t;   // clean: `at` holds t once the helper returns
}
