// memset of memory and of a thread's own arrays: each byte written with the value's low byte.
#include <cstring>

// Each thread clears 8 bytes starting at its own 4: neighbours' ranges overlap (line 8).
__global__ void clear_overlapping(float *out) {
    __shared__ unsigned char tile[4 * 257];
    unsigned char *mine = tile + threadIdx.x * 4;
    memset(mine, threadIdx.x, 8);
    __syncthreads();
    out[threadIdx.x] = tile[threadIdx.x];
}

// Each thread its own 4 bytes, read by its neighbour after the barrier: clean.
__global__ void clear_own(float *out) {
    __shared__ unsigned char tile[4 * 256];
    memset(tile + threadIdx.x * 4, threadIdx.x, 4);
    __syncthreads();
    out[threadIdx.x] = tile[(threadIdx.x ^ 1) * 4];
}

// A thread's own array of a template's type, cleared before use (clang leaves this call
// unresolved: the array's type is the template's): clean.
template <typename T, int N>
__global__ void accumulate(const T *in, T *out) {
    T acc[N];
    memset(acc, 0, sizeof(acc));
    for (int i = 0; i < N; i++)
        acc[i] += in[threadIdx.x * N + i];
    out[threadIdx.x] = acc[0];
}
