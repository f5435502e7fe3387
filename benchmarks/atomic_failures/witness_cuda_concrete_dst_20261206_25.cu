// kernelrace-args: --block-dim 2 --grid-dim 1
// atomic campaign seed 20261206 kernel 25, shrunk: witness (concrete) on dst
extern "C" __global__ void k(int* dst, int* sink) {
    __shared__ int c0;
    int t0 = atomicAdd(&c0, 0);
    int t1 = atomicAdd(&c0, 2);
    sink[(int)(blockIdx.x * blockDim.x + threadIdx.x)] = dst[t0 + t1];
    dst[(int)threadIdx.x] = t1;
}
