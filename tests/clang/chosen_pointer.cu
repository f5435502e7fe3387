// A pointer chosen between two buffers by the thread's warp (`w < 1 ? &a[..] : &b[..]`): each
// access through it reaches one buffer, the one its condition picks.
#define N 64

// Warp 0 copies a's rows and warp 1 b's into the tile; the reads through `src` are each one
// buffer's, every store has its own slot: clean.
__global__ void stage_both(const float *a, const float *b, float *out) {
    __shared__ float tile[2 * N];
    int w = threadIdx.x / 32, lane = threadIdx.x % 32;
    const float *src = (w < 1) ? (&a[blockIdx.x * N] + lane) : (&b[blockIdx.x * N] + lane);
    for (int k = 0; k < N; k += 32)
        tile[w * N + k + lane] = src[k];
    __syncthreads();
    out[blockIdx.x * 2 * N + threadIdx.x] = tile[threadIdx.x];
}

// Writes through the chosen pointer: warp 0 writes its block's a[lane], the other warps all write b[0]:
// the race is on b only (line 24), never on a.
__global__ void write_chosen(float *a, float *b) {
    int w = threadIdx.x / 32;
    float *dst = w == 0 ? &a[blockIdx.x * 32 + threadIdx.x] : b;
    dst += 0;
    w = 0;   // the choice was made where dst was: changing w later does not move it
    *dst = threadIdx.x;
}

// The same warp-split store, each warp to its own slots: clean.
__global__ void write_split(float *a, float *b) {
    int w = threadIdx.x / 32;
    float *dst = w == 0 ? &a[threadIdx.x] : &b[threadIdx.x - 32];
    dst[0] = threadIdx.x;
}
