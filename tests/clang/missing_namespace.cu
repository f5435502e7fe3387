// Names qualified by a namespace of a header not found (`std::`, `mylib::`): never a number the build
// defines. Host code that uses them is the host's business; a kernel that does is unknown, naming it.
#include <mylib/vectors.h>

struct Runner {
    Runner(const std::vector<float> &v);
    ~Runner();
};

Runner::Runner(const std::vector<float> &v) { std::size_t n = v.size(); }
Runner::~Runner() { std::puts("done"); }

__global__ void scale(float *x, float a) {
    x[blockIdx.x * blockDim.x + threadIdx.x] *= a;
}

__global__ void from_library(float *x) {
    x[threadIdx.x] = mylib::zero<float>();
}

// A class whose base a header not found declares: clang cannot read it whole. Host code only
// uses it; a kernel that does is unknown, naming it.
class Creator : public mylib::Registry {
public:
    int weight;
};

__global__ void with_broken_class(float *x, Creator c) {
    x[threadIdx.x] = c.weight;
}
