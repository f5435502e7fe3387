// `if constexpr (std::is_same_v<M, bool>)` on a type parameter no launch binds (mlx): the
// instantiation decides it, so both branches are checked, the trait a symbolic 0 or 1.
#include <type_traits>

// either branch writes the thread's own element: clean
template <typename T, typename M>
__global__ void masked(const T *src, T *dst, const M *mask, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    if constexpr (std::is_same_v<M, bool>) {
        dst[i] = mask[i] ? src[i] : T(0);
    } else {
        dst[i] = src[i] * T(mask[i]);
    }
}

// the branch of a mask that is no bool writes its neighbour's element too
template <typename T, typename M>
__global__ void spread_unless_bool(const T *src, T *dst, const M *mask, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i + 1 >= n) return;
    if constexpr (std::is_same_v<M, bool>) {
        dst[i] = src[i];
    } else {
        dst[i] = src[i];
        dst[i + 1] = src[i] * T(mask[i]);
    }
}
