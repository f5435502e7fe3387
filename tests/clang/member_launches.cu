// Launch extents set member by member on a local dim3 (`b.x = 32; b.y = b.z = 1;`) before the
// launch are read; a dim3 set under a condition, or passed by address, leaves its launch symbolic,
// one copy of the kernel of its own.
#define WIDTH 32

// each block owns 32 elements: a race between blocks once a block has more than 32 threads
__global__ void rows(float *out, const float *in) {
    out[blockIdx.x * 32 + threadIdx.x] = in[threadIdx.x];
}

void fill(dim3 *d);

void straight(float *out, const float *in) {
    dim3 block, grid;
    block.x = WIDTH;
    grid.x = 64;
    block.y = block.z = grid.z = 1;
    rows<<<grid, block>>>(out, in);
}

void guarded(float *out, const float *in, int wide) {
    dim3 block(WIDTH);
    if (wide)
        block.x = 64;
    rows<<<8, block>>>(out, in);
}

void by_address(float *out, const float *in) {
    dim3 block;
    fill(&block);
    rows<<<8, block>>>(out, in);
}
