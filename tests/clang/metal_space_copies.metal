// Structs with constructors copied between Metal's address spaces: device -> thread, thread ->
// threadgroup, threadgroup -> device, and a member function called on an object in device memory.
// C++ with address spaces of its own refused each (no constructor or `operator=` takes an object in
// another address space); NVPTX's generic address space holds them all. `rotate` orders its tile by
// a barrier (clean); `rotate_unordered` reads a neighbour's element without one (a race).
#include <metal_stdlib>
using namespace metal;

struct Pair {
  float lo;
  float hi;
  Pair() = default;
  Pair(float a, float b) : lo(a), hi(b) {}
  float sum() const { return lo + hi; }
};

kernel void rotate(device const Pair *in [[buffer(0)]],
                   device Pair *out [[buffer(1)]],
                   device float *sums [[buffer(2)]],
                   uint i [[thread_position_in_grid]],
                   uint lid [[thread_position_in_threadgroup]]) {
  threadgroup Pair tile[64];
  Pair v = in[i];
  tile[lid] = v;
  threadgroup_barrier(mem_flags::mem_threadgroup);
  out[i] = tile[(lid + 1) % 64];
  sums[i] = in[i].sum();
}

kernel void rotate_unordered(device const Pair *in [[buffer(0)]],
                             device Pair *out [[buffer(1)]],
                             uint i [[thread_position_in_grid]],
                             uint lid [[thread_position_in_threadgroup]]) {
  threadgroup Pair tile[64];
  Pair v = in[i];
  v.hi = 0.0f;
  tile[lid] = v;
  out[i] = tile[(lid + 1) % 64];   // expect: read-after-write (thread lid + 1 may not have written yet)
}
