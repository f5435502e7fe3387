// Template kernels a file instantiates explicitly, each checked as clang instantiates it: a member
// of a type parameter (`Policy::stride`), a functor's member template (`op.template fold<N>(...)`),
// a helper of a dependent type (`loader_t::load`), structs copied between device, thread and
// threadgroup memory, an index helper in a loop's condition. Under `Spread` every thread owns its
// elements (clean); under `Pile` (stride 0) every thread writes element `row` (a race).
#include <metal_stdlib>
using namespace metal;

#define instantiate_kernel(name, func, ...) \
  template [[host_name(name)]] [[kernel]] decltype(func<__VA_ARGS__>) func<__VA_ARGS__>;

struct Spread { static constexpr constant int stride = 1; };
struct Pile { static constexpr constant int stride = 0; };

template <typename T>
struct Pair {
  uint index;
  T val;
};

template <typename T>
struct Sum {
  template <int N>
  Pair<T> fold(Pair<T> acc, thread T *vals) {
    for (int i = 0; i < N; i++)
      acc.val += vals[i];
    return acc;
  }
};

template <typename T, int N>
struct Loader {
  static void load(const device T *src, thread T *dst) {
    for (int i = 0; i < N; i++)
      dst[i] = src[i];
  }
};

template <typename T, typename U>
inline T ceildiv(T n, U m) {
  return (n + m - 1) / m;
}

template <typename T, typename Policy, int N>
[[kernel]] void fold_rows(const device T *in [[buffer(0)]],
                          device Pair<T> *out [[buffer(1)]],
                          constant uint &len [[buffer(2)]],
                          uint row [[threadgroup_position_in_grid]],
                          uint lid [[thread_position_in_threadgroup]],
                          uint lsize [[threads_per_threadgroup]]) {
  using loader_t = Loader<T, N>;
  threadgroup Pair<T> partial[64];
  Sum<T> op;
  Pair<T> acc{0, T(0)};
  for (uint r = 0; r < ceildiv(len, N * lsize); r++) {
    T vals[N];
    loader_t::load(in + row * len + (r * lsize + lid) * N, vals);
    acc = op.template fold<N>(acc, vals);
  }
  acc.index = lid;
  partial[lid % 64] = acc;
  threadgroup_barrier(mem_flags::mem_threadgroup);
  if (lid < 64) {
    Pair<T> mine = partial[63 - lid];   // (a neighbour's: the barrier orders it)
    out[row * 64 * Policy::stride + lid * Policy::stride] = mine;   // expect: write-after-write under Pile
  }
}

instantiate_kernel("fold_rows_spread", fold_rows, float, Spread, 4)
template [[host_name("fold_rows_pile")]] [[kernel]] void fold_rows<float, Pile, 2>(
    const device float *in [[buffer(0)]], device Pair<float> *out [[buffer(1)]],
    constant uint &len [[buffer(2)]], uint row [[threadgroup_position_in_grid]],
    uint lid [[thread_position_in_threadgroup]], uint lsize [[threads_per_threadgroup]]);
