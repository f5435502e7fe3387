/* kernelrace's <cooperative_groups/reduce.h>: a tile's reduce and scans (a value shuffled across its
   threads: no barrier, no memory) and the operators they take. */
#pragma once
#include <cooperative_groups.h>
namespace cooperative_groups {
template <class T> struct plus { __device__ T operator()(T a, T b) const { return a + b; } };
template <class T> struct less { __device__ T operator()(T a, T b) const { return a < b ? a : b; } };
template <class T> struct greater { __device__ T operator()(T a, T b) const { return a > b ? a : b; } };
template <class T> struct bit_and { __device__ T operator()(T a, T b) const { return a & b; } };
template <class T> struct bit_or { __device__ T operator()(T a, T b) const { return a | b; } };
template <class T> struct bit_xor { __device__ T operator()(T a, T b) const { return a ^ b; } };
template <class G, class T, class Op> __device__ T reduce(const G &, T, Op);
template <class G, class T, class Op> __device__ T inclusive_scan(const G &, T, Op);
template <class G, class T, class Op> __device__ T exclusive_scan(const G &, T, Op);
}
