// Arrays of Tensor Core fragments whose shape a template gives (`fragment<accumulator, M, N, K, half>
// acc[2][2]` of a template no launch instantiates): each fragment a row of the lane's elements.
// Checked with 128 threads (4 warps) a block, one block, the shape 16 x 16 x 16 stated (--assume).
#include <mma.h>
using namespace nvcuda;

// each warp its own 16-row stripe of out, each (i, j) tile its own place in it: clean
template <int M, int N, int K>
__global__ void own_tiles(const half *a, const half *b, half *out) {
    int warp = threadIdx.x / 32;
    wmma::fragment<wmma::matrix_a, M, N, K, half, wmma::row_major> fa;
    wmma::fragment<wmma::matrix_b, M, N, K, half, wmma::col_major> fb;
    wmma::fragment<wmma::accumulator, M, N, K, half> acc[2][2];
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2; j++)
            wmma::fill_fragment(acc[i][j], 0.0f);
    wmma::load_matrix_sync(fa, a + warp * 16 * 16, 16);
    wmma::load_matrix_sync(fb, b, 16);
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2; j++)
            wmma::mma_sync(acc[i][j], fa, fb, acc[i][j]);
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2; j++)
            wmma::store_matrix_sync(out + (warp * 2 + i) * 16 * 16 * 2 + j * 16, acc[i][j], 16 * 2,
                                    wmma::mem_row_major);
}

// every warp stores its tiles at the same places (line 37)
template <int M, int N, int K>
__global__ void same_tiles(half *out) {
    wmma::fragment<wmma::accumulator, M, N, K, half> acc[2][2];
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2; j++)
            wmma::fill_fragment(acc[i][j], 1.0f);
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2; j++)
            wmma::store_matrix_sync(out + i * 16 * 16 * 2 + j * 16, acc[i][j], 16 * 2, wmma::mem_row_major);
}
