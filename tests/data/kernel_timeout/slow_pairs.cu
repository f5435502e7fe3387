// kernelrace-args: --scope block --block-dim 4,1,1
// differential (symbolic): oracle parameters P0=5. seed 20261221, chunk 117, kernel 33
extern "C" __global__ void k(float* g0, float* g1, float* g2, int P0) {
    __shared__ float s0[64];
    __shared__ float s1[8];
    if (((int)threadIdx.x) >= P0) {
        for (int r0 = P0; r0 < 6; r0 += 2) {
            g2[((r0 - P0) & 14)] = (float)(((int)threadIdx.x));
        }
    } else {
        g2[((P0 * P0) + P0)] = (float)(((int)threadIdx.x));   // expect: write-after-write
    }
    for (int r1 = 1; r1 < 5; r1 += (P0 + 1)) {
        for (int r2 = r1; r2 < (P0 + 1); r2 += P0) {
            int i0 = ((int)threadIdx.z);
        }
        __syncthreads();
        s0[(((P0 * P0) + P0) % 64)] = (float)(0);
    }
}
// timeout (cuda, symbolic): over 15 s
// The expectations are the oracle's races for the parameter values above, named as kernelrace
// would name them: review them before this file joins tests/fixtures.
