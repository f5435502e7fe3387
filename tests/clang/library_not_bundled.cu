// A kernel written against a library kernelrace does not bundle (here an invented one, whose header
// is not found): clang cannot read the kernel, so it is unknown, naming the header; the file is no
// error, and a directory holding it goes on.
#include <tilelib/tensor.hpp>

__global__ void scale(float *x, int n) {
    using namespace tilelib;
    auto t = make_tensor(make_gmem_ptr(x), make_shape(n));
    t(threadIdx.x) = 2.0f * t(threadIdx.x);
}

template <int N>
__global__ void fill(float *x) {
    tilelib::rt_fl<N, N> tile;
    tilelib::store(x, tile);
}
