// Tensor Core fragments (nvcuda::wmma): load_matrix_sync/store_matrix_sync read/write a 16x16 tile
// with a leading dimension, fill_fragment/mma_sync touch registers only. Which lane moves which
// element of a tile is the hardware's, so a lane reading back what its warp stored needs __syncwarp().
// Checked with 128 threads (4 warps) a block.
#include <mma.h>
using namespace nvcuda;

// each warp its own 16-row stripe of A and its own tile of shared memory; copied out after a barrier
__global__ void own_tiles(const half *a, const half *b, float *out, int kdim) {
    __shared__ float stage[4][16 * 16];
    int warp = threadIdx.x / 32;
    wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> fa;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::col_major> fb;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
    wmma::fill_fragment(acc, 0.0f);
    for (int k = 0; k < kdim; k += 16) {
        wmma::load_matrix_sync(fa, a + (blockIdx.x * 64 + warp * 16) * kdim + k, kdim);
        wmma::load_matrix_sync(fb, b + k, kdim);
        wmma::mma_sync(acc, fa, fb, acc);
    }
    for (int i = 0; i < acc.num_elements; i++)
        acc.x[i] = acc.x[i] * 0.5f;
    wmma::store_matrix_sync(&stage[warp][0], acc, 16, wmma::mem_row_major);
    __syncthreads();
    for (int i = threadIdx.x; i < 4 * 256; i += 128)
        out[blockIdx.x * 1024 + i] = stage[i / 256][i % 256];
}

// every warp stores the same tile
__global__ void one_tile_for_all(float *out) {
    __shared__ float stage[16 * 16];
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
    wmma::fill_fragment(acc, 1.0f);
    wmma::store_matrix_sync(stage, acc, 16, wmma::mem_row_major);   // expect: write-after-write
    __syncthreads();
    out[blockIdx.x * 128 + threadIdx.x] = stage[threadIdx.x];
}

// four tiles side by side in a 16 x 64 matrix: the leading dimension 64 keeps them apart
__global__ void side_by_side(float *out) {
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
    wmma::fill_fragment(acc, 1.0f);
    wmma::store_matrix_sync(out + blockIdx.x * 1024 + (threadIdx.x / 32) * 16, acc, 64, wmma::mem_row_major);
}

// the same with a leading dimension of 32: the tiles of warps 0 and 2 overlap
__global__ void side_by_side_narrow(float *out) {
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
    wmma::fill_fragment(acc, 1.0f);
    wmma::store_matrix_sync(out + blockIdx.x * 1024 + (threadIdx.x / 32) * 16, acc, 32, wmma::mem_col_major);   // expect: write-after-write
}

// a lane reads an element of the tile its warp stored: another lane may have stored it
__global__ void readback_without_syncwarp(float *out) {
    __shared__ float stage[4][256];
    int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
    wmma::fill_fragment(acc, 2.0f);
    wmma::store_matrix_sync(stage[warp], acc, 16, wmma::mem_row_major);
    out[blockIdx.x * 128 + threadIdx.x] = stage[warp][lane];   // expect: read-after-write
}

__global__ void readback_after_syncwarp(float *out) {
    __shared__ float stage[4][256];
    int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
    wmma::fill_fragment(acc, 2.0f);
    wmma::store_matrix_sync(stage[warp], acc, 16, wmma::mem_row_major);
    __syncwarp();
    out[blockIdx.x * 128 + threadIdx.x] = stage[warp][lane];
}

// a template's fragment (the element type and a dimension its parameters): each warp its own tile
template <typename T, int M>
__global__ void template_tiles(const T *a, float *out) {
    wmma::fragment<wmma::matrix_a, M, 16, 16, T, wmma::row_major> fa;
    wmma::fragment<wmma::accumulator, M, 16, 16, float> acc;
    wmma::fill_fragment(acc, 0.0f);
    wmma::load_matrix_sync(fa, a, 16);
    wmma::store_matrix_sync(out + (blockIdx.x * 4 + threadIdx.x / 32) * M * 16, acc, 16, wmma::mem_row_major);
}

void launch(const half *a, float *out) {
    template_tiles<half, 16><<<8, 128>>>(a, out);
}

// every block's warp stores its product (of its own block's data) to one tile: values of registers are
// never taken equal between blocks
__global__ void every_block(const half *in, float *out) {
    wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> fa;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
    wmma::fill_fragment(acc, 0.0f);
    wmma::load_matrix_sync(fa, in + blockIdx.x * 256, 16);
    wmma::mma_sync(acc, fa, fa, acc);
    if (threadIdx.x < 32)
        wmma::store_matrix_sync(out, acc, 16, wmma::mem_row_major);   // expect: write-after-write
}

// one-bit operands are not modelled: unknown
__global__ void one_bit(const unsigned *a) {
    wmma::fragment<wmma::matrix_a, 8, 8, 128, wmma::experimental::precision::b1, wmma::row_major> fa;
    wmma::load_matrix_sync(fa, a, 128);
}
