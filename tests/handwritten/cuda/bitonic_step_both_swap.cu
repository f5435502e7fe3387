// kernelrace-args: --block-dim 64
// verdict: race
// race: dev_values line 11: the `ixj > i` test was dropped, so both threads of a pair compare and swap the same two elements
__global__ void bitonic_sort_step(float *dev_values, int j, int k) {
    unsigned int i = threadIdx.x + blockDim.x * blockIdx.x;
    unsigned int ixj = i ^ j;
    if (ixj != i) {
        float a = dev_values[i], b = dev_values[ixj];
        bool asc = (i & k) == 0;
        if ((a > b) == asc) {
            dev_values[i] = b;   // BUG
            dev_values[ixj] = a;
        }
    }
}
