/* kernelrace's <mma.h>: Tensor Core fragments (nvcuda::wmma). A fragment is a register-only value;
   load_matrix_sync/store_matrix_sync read/write its rows x cols tile in memory with a leading
   dimension, split over the warp's 32 lanes (analyzer/frontend/clang/wmma.py reads the calls by
   name). num_elements is the tile's elements over 32 lanes: it counts this lane's share, not the
   hardware's register layout. Sub-byte precisions (u4, s4, b1) are declared so that a file parses:
   a kernel using them is unknown. */
#pragma once
#include <cuda_fp16.h>
#include <cuda_bf16.h>
namespace nvcuda {
namespace wmma {
struct matrix_a {};
struct matrix_b {};
struct accumulator {};
struct row_major {};
struct col_major {};
enum layout_t { mem_row_major, mem_col_major };
namespace precision { struct tf32 {}; }
namespace experimental {
namespace precision { struct u4 {}; struct s4 {}; struct b1 {}; }
enum bmmaBitOp { bmmaBitOpXOR = 1, bmmaBitOpAND = 2 };
enum bmmaAccumulateOp { bmmaAccumulateOpPOPC = 1 };
}
template <typename Use, int m, int n, int k> struct __kr_tile;
template <int m, int n, int k> struct __kr_tile<matrix_a, m, n, k> { enum { rows = m, cols = k }; };
template <int m, int n, int k> struct __kr_tile<matrix_b, m, n, k> { enum { rows = k, cols = n }; };
template <int m, int n, int k> struct __kr_tile<accumulator, m, n, k> { enum { rows = m, cols = n }; };
template <typename T> struct __kr_storage { typedef T type; };
template <> struct __kr_storage<precision::tf32> { typedef float type; };
template <> struct __kr_storage<experimental::precision::u4> { typedef int type; };
template <> struct __kr_storage<experimental::precision::s4> { typedef int type; };
template <> struct __kr_storage<experimental::precision::b1> { typedef unsigned type; };
template <typename Use, int m, int n, int k, typename T, typename Layout = void>
class fragment {
public:
    static constexpr int num_elements = __kr_tile<Use, m, n, k>::rows * __kr_tile<Use, m, n, k>::cols / 32;
    typedef typename __kr_storage<T>::type storage_element_type;
    storage_element_type x[num_elements];
};
template <typename Use, int m, int n, int k, typename T, typename Layout, typename P>
__device__ void load_matrix_sync(fragment<Use, m, n, k, T, Layout> &a, const P *p, unsigned ldm);
template <typename Use, int m, int n, int k, typename T, typename Layout, typename P>
__device__ void load_matrix_sync(fragment<Use, m, n, k, T, Layout> &a, const P *p, unsigned ldm, layout_t layout);
template <int m, int n, int k, typename T, typename P>
__device__ void store_matrix_sync(P *p, const fragment<accumulator, m, n, k, T, void> &a, unsigned ldm,
                                  layout_t layout);
template <typename Use, int m, int n, int k, typename T, typename Layout, typename V>
__device__ void fill_fragment(fragment<Use, m, n, k, T, Layout> &a, const V &v);
template <typename D, typename A, typename B, typename C>
__device__ void mma_sync(D &d, const A &a, const B &b, const C &c, bool satf = false);
template <typename D, typename A, typename B, typename C>
__device__ void bmma_sync(D &d, const A &a, const B &b, const C &c, experimental::bmmaBitOp = experimental::bmmaBitOpXOR,
                          experimental::bmmaAccumulateOp = experimental::bmmaAccumulateOpPOPC);
__device__ float __float_to_tf32(float);
}
}
