// An index helper of one `return` (row-major position of a 2-D grid): inlined, each thread writes its
// own element; `fold` folds two rows into one and races.
#include <metal_stdlib>
using namespace metal;

int linear_index(int row, int col, int rows, int cols) {
    return row * cols + col;
}

kernel void stencil(device const float *x [[buffer(0)]],
                    device float *out [[buffer(1)]],
                    uint2 pos [[thread_position_in_grid]],
                    uint2 grid [[threads_per_grid]]) {
    if (pos.x > 0 && pos.x < grid.x - 1) {
        int i = linear_index(pos.y, pos.x, grid.y, grid.x);
        out[i] = x[i - 1] + x[i + 1] - 2 * x[i];
    }
}

kernel void fold(device float *out [[buffer(0)]],
                 uint2 pos [[thread_position_in_grid]],
                 uint2 grid [[threads_per_grid]]) {
    out[linear_index(pos.y / 2, pos.x, grid.y, grid.x)] = 1.0f + pos.y;   // expect: write-after-write
}
