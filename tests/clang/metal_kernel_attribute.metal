// [[kernel]] in attribute lists, with the most threads a threadgroup may have.
#include <metal_stdlib>
using namespace metal;
[[kernel, max_total_threads_per_threadgroup(256)]] void a(device float *x [[buffer(0)]], uint t [[thread_position_in_grid]]) { x[t] = 1.0f; }
[[kernel]] [[max_total_threads_per_threadgroup(128)]] void b(device float *x [[buffer(0)]], uint t [[thread_position_in_grid]]) { x[t] = 2.0f; }
