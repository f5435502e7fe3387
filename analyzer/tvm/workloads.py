"""Kernel builders for common TE workloads, scheduled by TVM's dlight default GPU rules.

Each builder writes one workload in TVM's tensor expression language (`tvm.te`, `tvm.topi`),
turns it into a PrimFunc (`te.create_prim_func`) named after the workload, and schedules it with
dlight's default rules for GPU (Matmul, GEMV, Reduction, GeneralReduction, RMSNorm, Transpose and
Fallback, the first that applies) under the target `schedule_target`. The result is an IRModule
whose function is marked scheduled, so `kernelrace lint` builds it as is (it applies dlight's
`Fallback` only to unscheduled functions)::

    kernelrace lint analyzer.workloads:matmul --target cuda --param m=256 --param n=256 --param k=256
    kernelrace lint analyzer.workloads:softmax --target metal --param schedule_target=opencl

Parameters: the shape (an int, or a string for a symbolic extent of that name, e.g. `rows=n`, as
the batch or sequence dimension of an LLM's kernels), `dtype` (`float16` or `float32`) and
`schedule_target`, the target dlight schedules for (default `cuda`; also `opencl`, `metal`,
`vulkan`, or any TVM target string). It need not be the target kernelrace builds for:

- **CUDA**: dlight's tensor-core matmul schedule (float16 on sm_70 and later) segfaults inside
  `Tensorize` in TVM 0.27's wheel, so every function carries `dlight.do_not_tensorize` and matmul
  gets dlight's SIMT schedule (shared-memory tiles). `schedule_target=cuda` schedules for `sm_60`:
  the arch only decides that tensor-core attempt, so the schedules are those of `sm_80` (checked
  for every workload here), and the attempt's import of TVM's CUDA tensor intrinsics (~30 s) is
  skipped. kernelrace still builds for `sm_80`.
- **Metal**: dlight's Matmul rule crashes the process under `Target("metal")` (its simdgroup
  matmul segfaults in `Tensorize`, float16 and float32 alike), and its RMSNorm rule is reported to
  fail there, so Metal builds are scheduled for `opencl` (`schedule_target=opencl`), whose thread
  and shared-memory limits Metal meets. (The other workloads also schedule under `metal`.)
- **Vulkan**: dlight schedules every workload here under `Target("vulkan")` (warp size 1, so its
  cross-thread reductions go through shared memory), so Vulkan builds use `schedule_target=vulkan`.

`SCHEDULE_TARGET` maps each kernelrace target to its schedule target. What does not build (TVM
0.27, kernelrace's Vulkan path): `transpose` with a symbolic `m` scheduled for CUDA (TVM: "Can
only handle constant size stack allocation") or for Vulkan (its shared tile has a symbolic size,
which kernelrace's TIR-to-GLSL translation rejects).

The rule each workload gets (TVM 0.27): matmul -> Matmul, gemv -> GEMV, softmax and layer_norm ->
GeneralReduction, rms_norm (`topi.nn.rms_norm`: cast, square, sum, rsqrt, scale) and sum ->
Reduction, transpose -> Transpose. dlight's RMSNorm rule comes after Reduction in the default
list, so it is not reached (on its own it rejects `topi.nn.rms_norm` of a 2-D input).

`WORKLOADS` is a default sweep as (builder spec, parameters) pairs, float16 scheduled for CUDA;
`workloads(dtype, schedule_target)` gives it for one dtype and schedule target.
"""

from __future__ import annotations

from typing import Any

SPEC = "analyzer.workloads"
# The target each kernelrace target is scheduled for (see the module docstring).
SCHEDULE_TARGET = {"cuda": "cuda", "metal": "opencl", "vulkan": "vulkan"}


def _target(name: str):
    import tvm

    if name == "cuda":
        # dlight reads a CUDA target's arch only to choose its tensor-core matmul (sm_70 and later),
        # which this module turns off (`dlight.do_not_tensorize`); below sm_70 every rule gives the
        # schedule it gives for sm_80, without importing TVM's CUDA tensor intrinsics (~30 s).
        return tvm.target.Target({"kind": "cuda", "arch": "sm_60"})
    return tvm.target.Target(name)


def _shape(*values: int | str) -> tuple:
    """Extents: ints stay static, a string becomes a symbolic variable of that name. With a
    symbolic extent every extent is int64, as in the kernels Relax builds for LLMs (TVM rejects a
    buffer indexed by int32 and int64 expressions at once)."""
    import tvm
    from tvm import te

    if not any(isinstance(v, str) for v in values):
        return tuple(int(v) for v in values)
    return tuple(te.var(v, "int64") if isinstance(v, str) else tvm.tirx.IntImm("int64", int(v)) for v in values)


def _scheduled(name: str, tensors: list, schedule_target: str):
    """An IRModule holding `tensors` as one PrimFunc called `name`, scheduled by dlight."""
    import tvm
    from tvm import te
    from tvm.s_tir import dlight as dl

    func = te.create_prim_func(tensors).with_attr("global_symbol", name)
    # dlight's tensor-core matmul (CUDA sm_70 and later, float16) segfaults in `Tensorize` in this
    # TVM wheel, and would emit mma intrinsics: keep dlight's SIMT matmul schedule.
    func = func.with_attr("dlight.do_not_tensorize", True)
    mod = tvm.IRModule({name: func})
    with _target(schedule_target):
        mod = dl.ApplyDefaultSchedule(
            dl.gpu.Matmul(), dl.gpu.GEMV(), dl.gpu.Reduction(), dl.gpu.GeneralReduction(),
            dl.gpu.RMSNorm(), dl.gpu.Transpose(), dl.gpu.Fallback(),
        )(mod)
    if not (mod[name].attrs and mod[name].attrs.get("tirx.is_scheduled", False)):
        raise RuntimeError(f"no dlight rule scheduled {name} for {schedule_target}")
    return mod


def matmul(m: int | str = 256, n: int = 256, k: int = 256, dtype: str = "float16",
           schedule_target: str = "cuda"):
    """C[m, n] = sum_k A[m, k] * B[n, k]: a linear layer's layout (weights `B` row per output)."""
    from tvm import te

    m, n, k = _shape(m, n, k)
    a = te.placeholder((m, k), dtype, "A")
    b = te.placeholder((n, k), dtype, "B")
    r = te.reduce_axis((0, k), "k")
    c = te.compute((m, n), lambda i, j: te.sum(a[i, r] * b[j, r], axis=r), name="C")
    return _scheduled("matmul", [a, b, c], schedule_target)


def gemv(n: int = 4096, k: int = 4096, dtype: str = "float16", schedule_target: str = "cuda"):
    """y[1, n] = sum_k x[1, k] * W[n, k]: a decode step's matrix-vector product."""
    from tvm import te

    x = te.placeholder((1, k), dtype, "x")
    w = te.placeholder((n, k), dtype, "W")
    r = te.reduce_axis((0, k), "k")
    y = te.compute((1, n), lambda i, j: te.sum(x[i, r] * w[j, r], axis=r), name="y")
    return _scheduled("gemv", [x, w, y], schedule_target)


def softmax(rows: int | str = 32, cols: int = 4096, dtype: str = "float16", schedule_target: str = "cuda"):
    """Softmax over the last axis of X[rows, cols] (`topi.nn.softmax`)."""
    from tvm import te, topi

    rows, cols = _shape(rows, cols)
    x = te.placeholder((rows, cols), dtype, "X")
    return _scheduled("softmax", [x, topi.nn.softmax(x, axis=-1)], schedule_target)


def layer_norm(rows: int | str = 32, cols: int = 4096, dtype: str = "float16", schedule_target: str = "cuda"):
    """Layer norm over the last axis of X[rows, cols] with gamma and beta (`topi.nn.layer_norm`)."""
    from tvm import te, topi

    rows, cols = _shape(rows, cols)
    x = te.placeholder((rows, cols), dtype, "X")
    gamma = te.placeholder((cols,), dtype, "gamma")
    beta = te.placeholder((cols,), dtype, "beta")
    out = topi.nn.layer_norm(x, gamma, beta, axis=[-1])
    return _scheduled("layer_norm", [x, gamma, beta, out], schedule_target)


def rms_norm(rows: int | str = 32, cols: int = 4096, dtype: str = "float16", schedule_target: str = "cuda"):
    """RMS norm over the last axis of X[rows, cols] with a weight (`topi.nn.rms_norm`)."""
    from tvm import te, topi

    rows, cols = _shape(rows, cols)
    x = te.placeholder((rows, cols), dtype, "X")
    weight = te.placeholder((cols,), dtype, "weight")
    out = topi.nn.rms_norm(x, weight, axis=[-1])
    return _scheduled("rms_norm", [x, weight, out], schedule_target)


def sum(rows: int | str = 32, cols: int = 4096, dtype: str = "float16",  # the workload's name: shadows sum()
        schedule_target: str = "cuda"):
    """Row sums of X[rows, cols] (`topi.sum` over the last axis)."""
    from tvm import te, topi

    rows, cols = _shape(rows, cols)
    x = te.placeholder((rows, cols), dtype, "X")
    return _scheduled("sum", [x, topi.sum(x, axis=-1)], schedule_target)


def transpose(m: int | str = 1024, n: int = 1024, dtype: str = "float16", schedule_target: str = "cuda"):
    """The transpose of X[m, n] (`topi.transpose`)."""
    from tvm import te, topi

    x = te.placeholder(_shape(m, n), dtype, "X")
    return _scheduled("transpose", [x, topi.transpose(x)], schedule_target)


# The default sweep's shapes: static, plus a symbolic row count (`n`) where LLM kernels have one
# (the sequence length of a matmul's input, the rows of a norm or softmax).
_SHAPES: list[tuple[str, dict[str, Any]]] = [
    ("matmul", dict(m=256, n=256, k=256)),
    ("matmul", dict(m="n", n=256, k=256)),
    ("gemv", dict(n=4096, k=4096)),
    ("softmax", dict(rows=32, cols=4096)),
    ("softmax", dict(rows="n", cols=4096)),
    ("layer_norm", dict(rows=32, cols=4096)),
    ("rms_norm", dict(rows=32, cols=4096)),
    ("rms_norm", dict(rows="n", cols=4096)),
    ("sum", dict(rows=32, cols=4096)),
    ("transpose", dict(m=1024, n=1024)),
]


def workloads(dtype: str = "float16", schedule_target: str = "cuda") -> list[tuple[str, dict[str, Any]]]:
    """The default sweep as (builder spec, parameters) for one dtype and schedule target (use
    `SCHEDULE_TARGET[t]` to build for kernelrace target `t`)."""
    return [(f"{SPEC}:{name}", {**shape, "dtype": dtype, "schedule_target": schedule_target})
            for name, shape in _SHAPES]


WORKLOADS: list[tuple[str, dict[str, Any]]] = workloads("float16", "cuda")
