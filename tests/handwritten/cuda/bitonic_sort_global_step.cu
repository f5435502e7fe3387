// kernelrace-args: --block-dim 256
// verdict: clean
// One step of a bitonic sort in global memory (the host loops k and j over powers of two, one
// launch per step): thread i compares a[i] with its partner a[i ^ j], and only the lower of the
// two (ixj > i) swaps, so each pair of elements has one thread.
__global__ void bitonic_step(float *a, int j, int k) {
    unsigned int i = threadIdx.x + blockDim.x * blockIdx.x;
    unsigned int ixj = i ^ j;
    if (ixj > i) {
        if ((i & k) == 0) {
            if (a[i] > a[ixj]) { float t = a[i]; a[i] = a[ixj]; a[ixj] = t; }
        } else {
            if (a[i] < a[ixj]) { float t = a[i]; a[i] = a[ixj]; a[ixj] = t; }
        }
    }
}
