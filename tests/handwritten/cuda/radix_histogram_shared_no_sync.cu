// kernelrace-args: --block-dim 256
// verdict: race
// race: counts line 10: without the barrier after the zeroing, another thread's atomicAdd may land before (or be wiped by) the store of 0
// One pass of an LSD radix sort, the counting step: each block counts the 4-bit digit
// `(key >> shift) & 15` of its keys in shared memory (atomics), then 16 threads write the block's
// counts out. `shift` is the pass's bit offset, chosen by the host loop (0, 4, 8, ...).
__global__ void radix_histogram(const unsigned *keys, unsigned *block_counts, int shift, int n) {
    __shared__ unsigned counts[16];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (threadIdx.x < 16) counts[threadIdx.x] = 0;
    if (i < n) atomicAdd(&counts[(keys[i] >> shift) & 15], 1u);
    __syncthreads();
    if (threadIdx.x < 16) block_counts[blockIdx.x * 16 + threadIdx.x] = counts[threadIdx.x];
}
