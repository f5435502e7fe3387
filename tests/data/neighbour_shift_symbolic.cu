// fixtures/cuda/neighbour_shift.cu with a symbolic launch, not its kernelrace-args, and a tile as large as any block: its store races too
// Each thread stores its element, then reads its right neighbour's element: no barrier between.
extern "C" __global__ void neighbour_shift(const float* __restrict__ in, float* __restrict__ out) {
    __shared__ float sh[1024];
    int tid = threadIdx.x;
    int base = blockIdx.x * 128;
    sh[tid] = in[base + tid];
    out[base + tid] = sh[(tid + 1) % 128];   // expect: read-after-write
}
