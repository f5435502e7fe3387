// Shared tiles whose rows are sized by a template parameter (`[32 + PAD]`) of a template no launch
// instantiates: checked with PAD symbolic, each row PAD elements longer.
template <int STAGES, int PAD>
__global__ void transpose_tile(const float *in, float *out, int n) {
    __shared__ float tile[STAGES][32][32 + PAD];
    int x = threadIdx.x, y = threadIdx.y;   // a 32 x 32 block
    int stage = blockIdx.y % STAGES;
    tile[stage][y][x] = in[(blockIdx.x * 32 + y) * n + x];
    __syncthreads();
    out[blockIdx.x * 1024 + x * 32 + y] = tile[stage][x][y] * n;
}

// The same without the barrier: a thread reads the element another wrote (line 20 after 18).
template <int STAGES, int PAD>
__global__ void transpose_unsynced(const float *in, float *out, int n) {
    __shared__ float tile[STAGES][32][32 + PAD];
    int x = threadIdx.x, y = threadIdx.y;
    constexpr int LAST = STAGES - 1;
    tile[LAST][y][x] = in[(blockIdx.x * 32 + y) * n + x];
    out[blockIdx.x * 1024 + x * 32 + y] = tile[LAST][x][y] * n;
}
