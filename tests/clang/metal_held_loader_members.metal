// A loader object that also holds an array (mlx's conv loaders keep `int read_n[n_rows]` next to
// `threadgroup T* dst`): the struct lives in private memory, its pointer members are still the ones
// its constructor's member initialisers set and next_dst() moves.
#include <metal_stdlib>
using namespace metal;

template <typename T>
struct HeldLoader {
  threadgroup T* dst;
  const device T* src;
  int rows[2];

  METAL_FUNC HeldLoader(const device T* src_, threadgroup T* dst_, ushort lid) thread
      : dst(dst_ + lid), src(src_ + lid) {
    rows[0] = 0;
    rows[1] = 64;
  }

  METAL_FUNC void load() const thread { dst[rows[0]] = src[rows[1]]; }
  METAL_FUNC void next_dst() thread { dst += 1; }
};

// every thread stages its element, the group reads its neighbour's after a barrier: clean
kernel void held_staged(const device float* in [[buffer(0)]], device float* out [[buffer(1)]],
                        ushort lid [[thread_position_in_threadgroup]], uint gid [[threadgroup_position_in_grid]]) {
  threadgroup float tile[64];
  HeldLoader<float> loader(in + gid * 64, tile, lid);
  loader.load();
  threadgroup_barrier(mem_flags::mem_threadgroup);
  out[gid * 64 + lid] = tile[(lid + 1) % 64];
}

// the same without the barrier: the neighbour's element is read while it is written
kernel void held_unsynced(const device float* in [[buffer(0)]], device float* out [[buffer(1)]],
                          ushort lid [[thread_position_in_threadgroup]], uint gid [[threadgroup_position_in_grid]]) {
  threadgroup float tile[64];
  HeldLoader<float> loader(in + gid * 64, tile, lid);
  loader.load();
  out[gid * 64 + lid] = tile[(lid + 1) % 64];
}

// next_dst() moves the threadgroup pointer one element an iteration: thread t writes tile[t + k],
// which thread t + 1 wrote one iteration before, with no barrier between
kernel void held_sliding(const device float* in [[buffer(0)]], device float* out [[buffer(1)]],
                         ushort lid [[thread_position_in_threadgroup]], uint gid [[threadgroup_position_in_grid]]) {
  threadgroup float tile[128];
  HeldLoader<float> loader(in + gid * 64, tile, lid);
  for (int k = 0; k < 4; k++) {
    loader.load();
    loader.next_dst();
  }
  threadgroup_barrier(mem_flags::mem_threadgroup);
  out[gid * 64 + lid] = tile[lid];
}

// the pointer member set by an assignment and read from outside the struct: threads 2t and 2t + 1
// both write tile[t]
kernel void held_outside(const device float* in [[buffer(0)]], device float* out [[buffer(1)]],
                         ushort lid [[thread_position_in_threadgroup]], uint gid [[threadgroup_position_in_grid]]) {
  threadgroup float tile[64];
  HeldLoader<float> loader(in + gid * 64, tile, lid);
  loader.dst = tile + lid / 2;
  loader.dst[0] = float(lid);
  threadgroup_barrier(mem_flags::mem_threadgroup);
  out[gid * 64 + lid] = tile[lid];
}
