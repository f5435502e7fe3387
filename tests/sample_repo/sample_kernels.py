"""Kernel builders of the sample repository used by tests/test_config.py (test data).

`shift_inplace` races: thread i reads A[i + 1] and writes A[i] with no barrier between, so thread
i + 1 may overwrite A[i + 1] before thread i has read it (write-after-read on global memory).
`shift_out_of_place` reads A and writes a separate buffer B: no two threads touch one element.
"""

from tvm.script import tirx as T


def shift_inplace(n, dtype):
    @T.prim_func(s_tir=True)
    def shift(a: T.handle):
        T.func_attr({"tirx.is_scheduled": True})
        A = T.match_buffer(a, (n + 1,), dtype)
        for tx in T.thread_binding(n, thread="threadIdx.x"):
            with T.sblock("shift"):
                A[tx] = A[tx + 1] * T.cast(2, dtype)

    return shift


def shift_out_of_place(n, dtype):
    @T.prim_func(s_tir=True)
    def shift_out(a: T.handle, b: T.handle):
        T.func_attr({"tirx.is_scheduled": True})
        A = T.match_buffer(a, (n + 1,), dtype)
        B = T.match_buffer(b, (n,), dtype)
        for tx in T.thread_binding(n, thread="threadIdx.x"):
            with T.sblock("shift"):
                B[tx] = A[tx + 1] * T.cast(2, dtype)

    return shift_out
