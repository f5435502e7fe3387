// A loader object as Metal GEMM kernels write them: pointers to device and threadgroup memory held
// in a local struct's members, set by its constructor's member initialisers, advanced by next().
#include <metal_stdlib>
using namespace metal;

template <typename T, short TILE>
struct TileLoader {
  const short lane;
  const int stride;
  threadgroup T* dst;
  const device T* src;

  METAL_FUNC TileLoader(const device T* src_, threadgroup T* dst_, int stride_, ushort lid) thread
      : lane(lid), stride(stride_), dst(dst_ + lane), src(src_ + lane) {}

  METAL_FUNC void load() const thread { dst[0] = src[0]; }
  METAL_FUNC void next() thread { src += stride; }
  METAL_FUNC void next_dst() thread { dst += 1; }
};

// every thread stages its element, the group reads its neighbour's after a barrier: clean
kernel void staged(const device float* in [[buffer(0)]], device float* out [[buffer(1)]],
                   constant int& n [[buffer(2)]],
                   ushort lid [[thread_position_in_threadgroup]], uint gid [[threadgroup_position_in_grid]]) {
  threadgroup float tile[64];
  TileLoader<float, 64> loader(in + gid * 64, tile, n, lid);
  float acc = 0;
  for (int k = 0; k < 4; k++) {
    threadgroup_barrier(mem_flags::mem_threadgroup);
    loader.load();
    threadgroup_barrier(mem_flags::mem_threadgroup);
    acc += tile[(lid + 1) % 64];
    loader.next();
  }
  out[gid * 64 + lid] = acc;
}

// the same without the barrier after the load: the neighbour's element is read while it is written
kernel void unsynced(const device float* in [[buffer(0)]], device float* out [[buffer(1)]],
                     constant int& n [[buffer(2)]],
                     ushort lid [[thread_position_in_threadgroup]], uint gid [[threadgroup_position_in_grid]]) {
  threadgroup float tile[64];
  TileLoader<float, 64> loader(in + gid * 64, tile, n, lid);
  float acc = 0;
  for (int k = 0; k < 4; k++) {
    threadgroup_barrier(mem_flags::mem_threadgroup);
    loader.load();
    acc += tile[(lid + 1) % 64];
    loader.next();
  }
  out[gid * 64 + lid] = acc;
}

// next_dst() moves the threadgroup pointer one element an iteration: thread t writes tile[t + k],
// which thread t + 1 wrote one iteration before, with no barrier between
kernel void sliding(const device float* in [[buffer(0)]], device float* out [[buffer(1)]],
                    ushort lid [[thread_position_in_threadgroup]], uint gid [[threadgroup_position_in_grid]]) {
  threadgroup float tile[128];
  TileLoader<float, 64> loader(in + gid * 64, tile, 0, lid);
  for (int k = 0; k < 4; k++) {
    loader.load();
    loader.next_dst();
  }
  threadgroup_barrier(mem_flags::mem_threadgroup);
  out[gid * 64 + lid] = tile[lid];
}

// a copy of the loader holds the same pointers
kernel void copied(const device float* in [[buffer(0)]], device float* out [[buffer(1)]],
                   ushort lid [[thread_position_in_threadgroup]], uint gid [[threadgroup_position_in_grid]]) {
  threadgroup float tile[64];
  TileLoader<float, 64> first(in + gid * 64, tile, 0, lid);
  TileLoader<float, 64> second = first;
  second.next_dst();
  second.load();
  threadgroup_barrier(mem_flags::mem_threadgroup);
  out[gid * 64 + lid] = tile[lid];
}
