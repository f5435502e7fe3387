// Members qualified by their object's address space (Metal overloads on it, C++ cannot): each
// signature's first member is read, its repeats for other address spaces dropped (a member only
// qualified `device`, `total`, is read as unqualified: clang's generic address space takes the
// device object, and `totals` is read). `scale<T>` is read as its pattern, which stands for its
// instantiations: the pair_t one calls `operator float` (errors clang reports in an instantiation
// are that instantiation's); so is `copy_one`, a helper template `copy_over<pair_t>` asks for.
// `pair_copy` stores a struct into device memory outside any template: a copy into a generic
// object, as Metal's (clang refused it before the generic address space).
#include <metal_stdlib>
using namespace metal;

struct pair_t {
    float lo;
    float hi;
    constexpr pair_t(float a, float b) thread : lo(a), hi(b) {}
    constexpr pair_t() thread : lo(0), hi(0) {}
    constexpr pair_t() threadgroup : lo(0), hi(0) {}
    template <typename U> constexpr pair_t(U x) thread : lo(static_cast<float>(x)), hi(0) {}
    template <typename U> constexpr pair_t(U x) device : lo(static_cast<float>(x)), hi(0) {}
    constexpr operator float() const thread { return lo; }
    constexpr operator float() const device { return lo; }
    float total() const device { return lo + hi; }
};

template <typename T>
[[kernel]] void scale(device T *out [[buffer(0)]], constant const float &alpha [[buffer(1)]],
                      uint i [[thread_position_in_grid]]) {
    out[i] = static_cast<T>(alpha) * out[i];
}

template <typename T>
[[kernel]] void spill(device T *out [[buffer(0)]], uint i [[thread_position_in_grid]]) {
    out[i / 2] = out[i];   // expect: write-after-write (threads 2k, 2k+1 store out[k]) and write-after-read
}

template <typename T>
METAL_FUNC void copy_one(device T *out, device const T *in, uint i) {
    out[i] = in[i];
}

template <typename T>
[[kernel]] void copy_over(device T *out [[buffer(0)]], device const T *in [[buffer(1)]],
                          uint i [[thread_position_in_grid]]) {
    copy_one(out, in, i + 1);
    out[i] = in[i + 1];   // expect: write-after-write (thread i - 1 copied in[i] into out[i])
}

kernel void totals(device const pair_t *in [[buffer(0)]], device float *out [[buffer(1)]],
                   uint i [[thread_position_in_grid]]) {
    out[i] = in[i].total();
}

kernel void pair_copy(device pair_t *out [[buffer(0)]], device const pair_t *in [[buffer(1)]],
                      uint i [[thread_position_in_grid]]) {
    out[i] = in[i];
}

template [[host_name("scale_f32")]] [[kernel]] decltype(scale<float>) scale<float>;
template [[host_name("scale_pair")]] [[kernel]] decltype(scale<pair_t>) scale<pair_t>;
template [[host_name("spill_f32")]] [[kernel]] decltype(spill<float>) spill<float>;
template [[host_name("copy_f32")]] [[kernel]] decltype(copy_over<float>) copy_over<float>;
template [[host_name("copy_pair")]] [[kernel]] decltype(copy_over<pair_t>) copy_over<pair_t>;
template [[host_name("spill_pair")]] [[kernel]] decltype(spill<pair_t>) spill<pair_t>;
