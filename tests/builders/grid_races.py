"""TVMScript kernels whose blocks race with one another (test data for races between blocks).

`tiles(overlap)`: 1-D output tiles of 64 elements placed every `64 - overlap` elements, so with an
overlap the last elements of one block's tile are the first of the next block's.
`rotated_tiles(blocks)`: block b writes output tile (b + 1) % blocks, a permutation of the tiles
(no two blocks of the grid share one), for grids as large as WebGPU packs into x and z
(tests/test_webgpu_grid.py). `row_sums`: a 2-D grid whose blocks of one row (blockIdx.x) each
add their chunk (blockIdx.y) into the row's output without an atomic; `row_sums_fixed` gives
each row one block.
"""

from tvm.script import tirx as T


def tiles(overlap: int = 0, target=None):
    step = 64 - overlap

    @T.prim_func(s_tir=True)
    def grid_tiles(a: T.handle, b: T.handle):
        T.func_attr({"tirx.is_scheduled": True})
        A = T.match_buffer(a, (64 * 16,), "float32")
        B = T.match_buffer(b, (64 * 16,), "float32")
        for bx in T.thread_binding(15, thread="blockIdx.x"):
            for tx in T.thread_binding(64, thread="threadIdx.x"):
                with T.sblock("copy"):
                    B[bx * step + tx] = A[bx * step + tx] * T.float32(tx)

    return grid_tiles


def rotated_tiles(blocks: int = 65537, target=None):
    @T.prim_func(s_tir=True)
    def rotated_tiles(a: T.handle, b: T.handle):
        T.func_attr({"tirx.is_scheduled": True})
        A = T.match_buffer(a, (blocks * 64,), "float32")
        B = T.match_buffer(b, (blocks * 64,), "float32")
        for bx in T.thread_binding(blocks, thread="blockIdx.x"):
            for tx in T.thread_binding(64, thread="threadIdx.x"):
                with T.sblock("copy"):
                    B[T.truncmod(bx + 1, blocks) * 64 + tx] = A[bx * 64 + tx]

    return rotated_tiles


def row_sums(target=None):
    @T.prim_func(s_tir=True)
    def grid_row_sums(x: T.handle, out: T.handle):
        T.func_attr({"tirx.is_scheduled": True})
        X = T.match_buffer(x, (8, 4, 64), "int32")
        O = T.match_buffer(out, (8, 64), "int32")
        for bx in T.thread_binding(8, thread="blockIdx.x"):
            for by in T.thread_binding(4, thread="blockIdx.y"):
                for tx in T.thread_binding(64, thread="threadIdx.x"):
                    with T.sblock("acc"):
                        O[bx, tx] = O[bx, tx] + X[bx, by, tx]

    return grid_row_sums


def row_sums_fixed(target=None):
    """One block per row, looping over the row's chunks: no two blocks share an output row."""
    @T.prim_func(s_tir=True)
    def grid_row_sums_fixed(x: T.handle, out: T.handle):
        T.func_attr({"tirx.is_scheduled": True})
        X = T.match_buffer(x, (8, 4, 64), "int32")
        O = T.match_buffer(out, (8, 64), "int32")
        for bx in T.thread_binding(8, thread="blockIdx.x"):
            for tx in T.thread_binding(64, thread="threadIdx.x"):
                with T.sblock("acc"):
                    for c in T.serial(4):
                        O[bx, tx] = O[bx, tx] + X[bx, c, tx]

    return grid_row_sums_fixed
