// kernelrace-args: --block-dim 64
// verdict: clean
// Element-wise scale using the header's global_id helper.
#include "include/kr_common.cuh"
__global__ void scale(float *x, float a, int n) {
    int i = global_id();
    if (i < n) x[i] *= a;
}
