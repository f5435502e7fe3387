// kernelrace-args: --block-dim 64
// verdict: race
// race: s line 14: the inner loop's barrier was hoisted out of the stride loop, so consecutive strides overlap
__global__ void bitonicSortShared(int *d_vals) {
    __shared__ int s[64];
    unsigned int tid = threadIdx.x;
    s[tid] = d_vals[blockIdx.x * 64 + tid];
    __syncthreads();
    for (unsigned int size = 2; size <= 64; size <<= 1) {
        for (unsigned int stride = size / 2; stride > 0; stride >>= 1) {
            unsigned int ixj = tid ^ stride;
            if (ixj > tid) {
                bool up = (tid & size) == 0;
                int a = s[tid], b = s[ixj];   // BUG
                if ((a > b) == up) {
                    s[tid] = b;
                    s[ixj] = a;
                }
            }
        }
        __syncthreads();
    }
    d_vals[blockIdx.x * 64 + tid] = s[tid];
}
