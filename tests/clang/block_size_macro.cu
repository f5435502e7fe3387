// BLOCK_SIZE comes from the build (-DBLOCK_SIZE=...): a symbolic parameter here.
__global__ void tiles(float *x) {
    __shared__ float s[BLOCK_SIZE];
    s[threadIdx.x] = x[blockIdx.x * BLOCK_SIZE + threadIdx.x];
    __syncthreads();
    x[blockIdx.x * BLOCK_SIZE + threadIdx.x] = s[BLOCK_SIZE - 1 - threadIdx.x];
}
