// kernelrace-args: --block-dim 32
// verdict: clean
// Odd-even transposition sort of 64 keys by 32 threads; a barrier after every phase.
__global__ void oddEvenSort(int *keys) {
    __shared__ int s[64];
    int t = threadIdx.x;
    s[2 * t] = keys[blockIdx.x * 64 + 2 * t];
    s[2 * t + 1] = keys[blockIdx.x * 64 + 2 * t + 1];
    __syncthreads();
    for (int phase = 0; phase < 64; ++phase) {
        int i = 2 * t + (phase & 1);
        if (i + 1 < 64 && s[i] > s[i + 1]) {
            int tmp = s[i];
            s[i] = s[i + 1];
            s[i + 1] = tmp;
        }
        __syncthreads();
    }
    keys[blockIdx.x * 64 + 2 * t] = s[2 * t];
    keys[blockIdx.x * 64 + 2 * t + 1] = s[2 * t + 1];
}
