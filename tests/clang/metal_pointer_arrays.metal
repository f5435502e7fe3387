// Arrays of pointers in private memory, as Metal conv loaders hold them: `threadgroup T* rows[2]`
// set row by row, advanced with `+=`, read as `rows[i][j]`, in a local and in a struct's member.
#include <metal_stdlib>
using namespace metal;

// each thread writes its own two elements through its rows: clean
kernel void own_rows(device float* out [[buffer(0)]], ushort lid [[thread_position_in_threadgroup]]) {
  threadgroup float tile[128];
  threadgroup float* rows[2];
  rows[0] = tile + 2 * lid;
  rows[1] = rows[0] + 1;
  rows[0][0] = 1.0f;
  rows[1][0] = float(lid);
  threadgroup_barrier(mem_flags::mem_threadgroup);
  out[lid] = tile[2 * lid] + tile[2 * lid + 1];
}

// row 1 is moved one element on: thread t writes tile[2t + 2], thread t + 1's row 0
kernel void moved_row(device float* out [[buffer(0)]], ushort lid [[thread_position_in_threadgroup]]) {
  threadgroup float tile[130];
  threadgroup float* rows[2];
  rows[0] = tile + 2 * lid;
  rows[1] = tile + 2 * lid + 1;
  rows[1] += 1;
  rows[0][0] = float(lid);
  rows[1][0] = float(lid);
  threadgroup_barrier(mem_flags::mem_threadgroup);
  out[lid] = tile[2 * lid];
}

// rows into two buffers: not followed (unknown)
kernel void two_buffers(device float* out [[buffer(0)]], device float* other [[buffer(1)]],
                        ushort lid [[thread_position_in_threadgroup]]) {
  device float* rows[2];
  rows[0] = out + lid;
  rows[1] = other + lid;
  rows[0][0] = rows[1][0];
}

template <typename T>
struct RowLoader {
  const device T* src[2];
  threadgroup T* dst;
  METAL_FUNC RowLoader(const device T* src_, threadgroup T* dst_, ushort lid) thread : dst(dst_ + lid) {
    for (short i = 0; i < 2; ++i) src[i] = src_ + 2 * lid + i;
  }
  METAL_FUNC void load() const thread { dst[0] = src[0][0] + src[1][0]; }
  METAL_FUNC void next(int stride) thread {
    for (short i = 0; i < 2; ++i) src[i] += stride;
  }
};

// the loader reads its rows of the input and stages one element a thread, a barrier between
// staging and reading, and between reading and the next staging: clean
kernel void loader_rows(const device float* in [[buffer(0)]], device float* out [[buffer(1)]],
                        ushort lid [[thread_position_in_threadgroup]]) {
  threadgroup float tile[64];
  RowLoader<float> loader(in, tile, lid);
  float acc = 0;
  for (int k = 0; k < 4; k++) {
    loader.load();
    threadgroup_barrier(mem_flags::mem_threadgroup);
    acc += tile[(lid + 1) % 64];
    threadgroup_barrier(mem_flags::mem_threadgroup);
    loader.next(128);
  }
  out[lid] = acc;
}
