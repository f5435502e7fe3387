// A functor of a kernel template's type parameter, default-constructed and called with pointers to
// constant memory only: read as a value of its arguments (it can read constant memory, never write).
// `gather` stores each thread's own element (clean); `scatter` stores where the functor says, which
// two threads may share; `through_device` hands the functor a device pointer (unknown), and so does
// `seeded`, whose functor is built from one. `widen` converts a read to its type parameter, which
// clang leaves an unresolved construction: the read is still read.
#include <metal_stdlib>
using namespace metal;

struct strided {
    METAL_FUNC uint operator()(uint i, constant uint *strides) { return i * strides[0]; }
};

struct keeps {
    device float *p;
    METAL_FUNC uint operator()(uint i, constant uint *strides) { p[i] = 0.0f; return i * strides[0]; }
};

template <typename Index>
[[kernel]] void gather(constant uint *strides [[buffer(0)]], device const float *in [[buffer(1)]],
                       device float *out [[buffer(2)]], uint i [[thread_position_in_grid]]) {
    Index index;
    out[i] = in[index(i, strides)];
}

template <typename Index>
[[kernel]] void scatter(constant uint *strides [[buffer(0)]], device float *out [[buffer(1)]],
                        uint i [[thread_position_in_grid]]) {
    Index index;
    out[index(i, strides)] = float(i);   // expect: write-after-write (two threads, one index)
}

template <typename Index>
[[kernel]] void through_device(device uint *strides [[buffer(0)]], device float *out [[buffer(1)]],
                               uint i [[thread_position_in_grid]]) {
    Index index;
    out[i] = float(index(i, strides));
}

template <typename Index>
[[kernel]] void seeded(constant uint *strides [[buffer(0)]], device float *out [[buffer(1)]],
                       uint i [[thread_position_in_grid]]) {
    Index index{out};
    out[i] = float(index(i, strides));
}

template <typename IdxT>
[[kernel]] void widen(device int *buf [[buffer(0)]], uint i [[thread_position_in_grid]]) {
    IdxT j = IdxT(buf[i + 1]);   // expect: the read kept (`IdxT(...)` is a construction clang leaves open)
    buf[i] = int(j) * 0;         // expect: write-after-read (thread i - 1 reads buf[i])
}

template [[host_name("gather")]] [[kernel]] decltype(gather<strided>) gather<strided>;
template [[host_name("scatter")]] [[kernel]] decltype(scatter<strided>) scatter<strided>;
template [[host_name("seeded")]] [[kernel]] decltype(seeded<keeps>) seeded<keeps>;
