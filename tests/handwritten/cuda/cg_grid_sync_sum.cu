// kernelrace-args: --block-dim 256
// verdict: clean
// Cooperative-launch two-phase kernel: per-block partial sums, grid.sync(), then block 0 folds the partials.
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
__global__ void grid_sum(const float *in, float *partial, float *out, int n) {
    cg::grid_group grid = cg::this_grid();
    cg::thread_block block = cg::this_thread_block();
    __shared__ float s[256];
    float v = 0.0f;
    for (int i = blockIdx.x * 256 + threadIdx.x; i < n; i += 256 * gridDim.x) v += in[i];
    s[threadIdx.x] = v;
    block.sync();
    for (int k = 128; k > 0; k >>= 1) {
        if (threadIdx.x < k) s[threadIdx.x] += s[threadIdx.x + k];
        block.sync();
    }
    if (threadIdx.x == 0) partial[blockIdx.x] = s[0];
    grid.sync();
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        float total = 0.0f;
        for (int b = 0; b < gridDim.x; ++b) total += partial[b];
        *out = total;
    }
}
