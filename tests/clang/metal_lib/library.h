// A library header of our own in the style of a Metal array framework: a kernel template declared
// through a macro with [[host_name]] on an explicit instantiation, a number type with its own
// operators (so that clang leaves `p += n` on a dependent operand an unresolved operator call), and
// the standard type traits and limits.
#pragma once
#include <metal_stdlib>

struct fixed16 { short v; };
inline fixed16 operator+(fixed16 a, fixed16 b) { return {short(a.v + b.v)}; }
inline fixed16 &operator+=(thread fixed16 &a, fixed16 b) { a.v += b.v; return a; }

template <typename T>
struct Limits {
  static constexpr constant T lowest = metal::numeric_limits<T>::lowest();
};

#define instantiate_kernel(name, func, ...) \
  template [[host_name(                     \
      name)]] [[kernel]] decltype(func<__VA_ARGS__>) func<__VA_ARGS__>;
