// Kernels written against a library header (metal_lib/library.h): a pointer advanced inside a
// template, an array parameter in constant memory, a `coherent(system)` buffer, enable_if_t and
// numeric_limits. `row_max` is clean; `stamp` lets every thread write element 0.
#include <metal_stdlib>
#include "metal_lib/library.h"
using namespace metal;

template <typename T, typename = metal::enable_if_t<metal::is_floating_point_v<T>>>
[[kernel]] void row_max(const device T *x [[buffer(0)]],
                        device T *out [[buffer(1)]],
                        constant const int64_t strides[2] [[buffer(2)]],
                        constant uint &row_size [[buffer(3)]],
                        uint gid [[threadgroup_position_in_grid]],
                        uint lid [[thread_position_in_threadgroup]]) {
  x += gid * size_t(strides[0]);
  T best = Limits<T>::lowest;
  for (uint i = 0; i < row_size; i++)
    best = max(best, x[i]);
  if (lid == 0)
    out[gid] = best;
}

[[kernel]] void stamp(volatile coherent(system) device uint *clock [[buffer(0)]],
                      constant uint &value [[buffer(1)]],
                      uint gid [[thread_position_in_grid]]) {
  clock[0] = value + gid;   // expect: write-after-write (meant for one thread)
}

instantiate_kernel("row_max_float32", row_max, float)
instantiate_kernel("row_max_float16", row_max, half)
