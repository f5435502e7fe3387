// kernelrace-args: --block-dim 128
// verdict: race
// race: s line 16: no barrier ends a stage: the next stage reads a pair another thread is writing
// Radix-2 FFT of 256 points per block in shared memory (Stockham-free, in place after bit reversal):
// stage by stage, each thread owns one butterfly (i, i + half); a barrier ends every stage.
__global__ void fft256(float2 *data, const float2 *twiddle) {
    __shared__ float2 s[256];
    unsigned t = threadIdx.x;
    const float2 *in = data + blockIdx.x * 256;
    s[__brev(t) >> 24] = in[t];
    s[__brev(t + 128) >> 24] = in[t + 128];
    __syncthreads();
    for (unsigned half = 1; half < 256; half <<= 1) {
        unsigned j = t & (half - 1);
        unsigned i = ((t - j) << 1) + j;
        float2 w = twiddle[j * (128 / half)];
        float2 a = s[i], b = s[i + half];
        float2 wb = make_float2(w.x * b.x - w.y * b.y, w.x * b.y + w.y * b.x);
        s[i] = make_float2(a.x + wb.x, a.y + wb.y);
        s[i + half] = make_float2(a.x - wb.x, a.y - wb.y);
    }
    __syncthreads();
    data[blockIdx.x * 256 + t] = s[t];
    data[blockIdx.x * 256 + t + 128] = s[t + 128];
}
