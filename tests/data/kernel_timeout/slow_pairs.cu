// kernelrace-args: --scope block --block-dim 42,1,1
// differential (symbolic): oracle parameters P0=0, P1=1. seed 20261274 (shrunk)
extern "C" __global__ void k(float* g0, int P0, int P1) {
    __shared__ float s0[16];
    g0[((((int)threadIdx.z) * P0) + P0)] = ((float)(3) + 1.0f);   // expect: write-after-write
    int i0 = P0;
    int w0 = (2 ^ i0);
    while (w0 < 3) {
        if ((i0 / 2) == ((int)threadIdx.x)) {
            float f0 = s0[(((P0 * P1) + i0) & 15)];
        } else {
            s0[(((w0 % (1 << P0)) * P1) % 16)] = (float)(((int)threadIdx.x));   // expect: write-after-write
            float f1 = g0[((((int)threadIdx.x) - P0) & ((2 << P1) - 1))];
        }
        w0 += P1;
    }
    __syncthreads();
}
// `w0 % (1 << P0)` is one remainder by a constant per exponent (63): every query of the s0 pairs
// runs to its budget, 22 s without a time limit. The expectations are the oracle's races for the
// parameter values above, named as kernelrace would name them.
