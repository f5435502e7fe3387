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

// Rows of a struct template's specialisation (`Cell<2>`: its argument is an expression clang lists
// before the dimensions, never one of them). Inside a template no launch instantiates, clang gives
// no size for `Cell<2>`: with a symbolic row, no stride can be known, and the kernel is `unknown`.
template <int W>
struct Cell { float v[W]; };

template <int PAD>
__global__ void transpose_cells(float *out) {
    __shared__ Cell<2> tile[32][32 + PAD];
    tile[threadIdx.y][threadIdx.x].v[1] = threadIdx.x;
    __syncthreads();
    out[blockIdx.x * 1024 + threadIdx.y * 32 + threadIdx.x] = tile[threadIdx.x][threadIdx.y].v[1];
}
