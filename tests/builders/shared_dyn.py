"""TVMScript kernels that keep data in dynamic shared memory (`shared.dyn`) (test data for the
barriers TVM's ThreadSync inserts and each code generator emits, docs/benchmarks.md).

`exchange(scope, second)`: each block stages 64 values in a shared buffer and reads them back
reversed (thread t reads what thread 63 - t wrote), then does the same through a second buffer
of dtype `second`. ThreadSync puts a `tvm_storage_sync` between each write and the read after it
and one between the first buffer's last read and the second's first write, which TVM's storage
rewrite places in the same memory (with `second=float16` as differently typed views of one
allocation, which MergeSharedMemoryAllocations names `buf_dyn_shmem` on WebGPU). `scope` is
"shared.dyn" or "shared" (the control).

`dlight_dyn(workload, ...)`: a dlight-scheduled workload (analyzer/tvm/workloads.py) whose
shared-memory buffers are moved to `shared.dyn`.
"""

from tvm.script import tirx as T


def exchange(scope: str = "shared.dyn", second: str = "float32", target=None):
    @T.prim_func(s_tir=True)
    def exchange(x: T.handle, y: T.handle, z: T.handle):
        T.func_attr({"tirx.is_scheduled": True})
        X = T.match_buffer(x, (1024,), "float32")
        Y = T.match_buffer(y, (1024,), "float32")
        Z = T.match_buffer(z, (1024,), "float32")
        for bx in T.thread_binding(16, thread="blockIdx.x"):
            with T.sblock("tile"):
                T.reads(X[bx * 64: bx * 64 + 64], Y[bx * 64: bx * 64 + 64])
                T.writes(Y[bx * 64: bx * 64 + 64], Z[bx * 64: bx * 64 + 64])
                A_sh = T.alloc_buffer((64,), "float32", scope=scope)
                B_sh = T.alloc_buffer((64,), second, scope=scope)
                for tx in T.thread_binding(64, thread="threadIdx.x"):
                    with T.sblock("stage_a"):
                        A_sh[tx] = X[bx * 64 + tx]
                for tx in T.thread_binding(64, thread="threadIdx.x"):
                    with T.sblock("read_a"):
                        Y[bx * 64 + tx] = A_sh[63 - tx]
                for tx in T.thread_binding(64, thread="threadIdx.x"):
                    with T.sblock("stage_b"):
                        B_sh[tx] = T.Cast(second, Y[bx * 64 + tx])
                for tx in T.thread_binding(64, thread="threadIdx.x"):
                    with T.sblock("read_b"):
                        Z[bx * 64 + tx] = T.Cast("float32", B_sh[63 - tx])

    return exchange


def dlight_dyn(workload: str = "matmul", schedule_target: str = "opencl", dtype: str = "float32", target=None,
               **shape):
    """A dlight-scheduled workload of `analyzer.tvm.workloads` with every buffer its schedule put in
    `shared` moved to `shared.dyn` (`set_scope` on the blocks that write them), as a schedule that
    asks for dynamic shared memory has it (dlight's own tensor-core matmul does, for CUDA)."""
    from tvm import s_tir

    from analyzer.tvm import workloads

    mod = getattr(workloads, workload)(dtype=dtype, schedule_target=schedule_target, **shape)
    sch = s_tir.Schedule(mod)

    def walk(parent):
        for child in sch.get_child_blocks(parent):
            for i, region in enumerate(sch.get(child).writes):
                if region.source.scope() == "shared":
                    sch.set_scope(child, i, "shared.dyn")
            walk(child)

    walk(sch.get_sblock("root", func_name=workload))
    return sch.mod
