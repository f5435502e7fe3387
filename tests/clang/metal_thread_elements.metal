// A SIMD-group matrix's own elements (`thread_elements()`), written and read as mlx's MMA tiles do,
// and a tag struct passed by value (`Aligned<true>{}`) and cast to void.
#include <metal_stdlib>
using namespace metal;

template <bool A> struct Aligned {};

template <bool A>
METAL_FUNC void stage(threadgroup float* tile, ushort lid, Aligned<A> tag) {
  (void)tag;
  if (!A) {
    return;
  }
  tile[lid] = 1.0f;
}

// every thread stores its element of the matrix at out[gid]: the threads of a group store
// different values there (a lane's elements are never taken to equal another's)
kernel void lanes(const device float* in [[buffer(0)]], device float* out [[buffer(1)]],
                  ushort lid [[thread_position_in_threadgroup]], uint gid [[threadgroup_position_in_grid]]) {
  threadgroup float tile[64];
  simdgroup_float8x8 m(0);
  m.thread_elements()[0] = in[gid * 64 + lid];
  auto& e = m.thread_elements();
  e[1] = 2.0f;
  stage(tile, lid, Aligned<true>{});
  threadgroup_barrier(mem_flags::mem_threadgroup);
  out[gid] = m.thread_elements()[0] + tile[(lid + 1) % 64];
}
