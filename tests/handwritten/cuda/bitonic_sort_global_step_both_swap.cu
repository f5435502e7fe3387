// kernelrace-args: --block-dim 256
// verdict: race
// race: a line 13: without the ixj > i guard both partners of a pair swap a[i] and a[i ^ j]
// One step of a bitonic sort in global memory (the host loops k and j over powers of two), with
// the guard that leaves each pair to its lower thread forgotten: thread i and thread i ^ j both
// read and write a[i] and a[i ^ j].
__global__ void bitonic_step(float *a, int j, int k) {
    unsigned int i = threadIdx.x + blockDim.x * blockIdx.x;
    unsigned int ixj = i ^ j;
    if ((i & k) == 0) {
        if (a[i] > a[ixj]) { float t = a[i]; a[i] = a[ixj]; a[ixj] = t; }
    } else {
        if (a[i] < a[ixj]) { float t = a[i]; a[i] = a[ixj]; a[ixj] = t; }
    }
}
