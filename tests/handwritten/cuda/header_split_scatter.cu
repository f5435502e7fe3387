// kernelrace-args: --block-dim 64
// verdict: race
// race: out line 7: the scatter index from the header helper is halved, so two threads write one element
#include "include/kr_common.cuh"
__global__ void scatter_half(const float *in, float *out, int n) {
    int i = global_id();
    if (i < n) out[i / 2] = in[i];   // BUG
}
