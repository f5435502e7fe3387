// A builtin index vector passed whole to a device function (Parboil's `q.reset(threadIdx.x, blockDim)`).

struct Queues {
    int tail[8];
    int sharers[8];

    // each slot its count of sharers: the block's threads spread over the 8 slots
    __device__ void reset(int index, dim3 block_dim) {
        tail[index] = 0;
        sharers[index] = (block_dim.x >> 3) + (threadIdx.x < (block_dim.x & 7));
    }
};

__device__ int flat(uint3 t, dim3 d) {
    return t.y * d.x + t.x;
}

// Each thread its own element through the vectors it is given: clean.
__global__ void own_slots(int* out) {
    __shared__ Queues q;
    if (threadIdx.x < 8) {
        q.reset(threadIdx.x, blockDim);
    }
    __syncthreads();
    out[flat(threadIdx, blockDim) + blockIdx.x * blockDim.x * blockDim.y] = q.sharers[threadIdx.x % 8];
}

// The element of the thread's transposed index: threads of a square block swap places.
__global__ void transposed(int* out) {
    int i = flat(threadIdx, blockDim);
    out[i] = out[threadIdx.x * blockDim.x + threadIdx.y] + 1;
}
