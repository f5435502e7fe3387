// kernelrace-args: --block-dim 64
// verdict: race
// race: s line 8: the neighbour's struct is read back from shared memory with no barrier
struct Cell { float v; int flag; };
__global__ void cells(const Cell *in, float *out) {
    __shared__ Cell s[64];
    s[threadIdx.x] = in[blockIdx.x * 64 + threadIdx.x];
    Cell c = s[(threadIdx.x + 1) % 64];   // BUG
    out[blockIdx.x * 64 + threadIdx.x] = c.flag ? c.v : 0.0f;
}
