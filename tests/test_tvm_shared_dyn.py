"""Dynamic shared memory (`shared.dyn`) through TVM's code generators (docs/benchmarks.md,
"Dynamic shared memory through TVM's code generators"): the `tvm_storage_sync` calls ThreadSync puts
in the lowered device TIR against the barriers each target's source holds, and kernelrace's verdict
on each source. The kernel is `tests/builders/shared_dyn.py:exchange` (three storage syncs).

Pinned for TVM 0.27: CUDA keeps the three barriers; Metal's codegen refuses `shared.dyn`; WebGPU
emits the buffer as `var<workgroup>` and drops every barrier, which kernelrace reports as races;
OpenCL drops the barriers and declares the buffer without `__local`, one private copy per
work-item (no race to report, but each work-item reads elements no one of it wrote). With
`scope="shared"` every target keeps its three barriers. dlight's schedules fare the same: all
their barriers survive with `shared`, none of the `shared.dyn` ones on WebGPU and OpenCL."""

import re

import pytest

from analyzer.errors import KernelraceError
from analyzer.pipeline import Options, check_built
from analyzer.tvm.builders import lower_device, make_target
from conftest import built

SPEC = "builders.shared_dyn:exchange"
BARRIER = {"cuda": r"__syncthreads\(\)", "metal": r"threadgroup_barrier\(", "webgpu": r"workgroupBarrier\(\)",
           "opencl": r"\bbarrier\("}
# Barriers in the emitted source for the kernel's three storage syncs (TVM 0.27).
EMITTED = {("shared.dyn", "cuda"): 3, ("shared.dyn", "webgpu"): 0, ("shared.dyn", "opencl"): 0,
           ("shared", "cuda"): 3, ("shared", "metal"): 3, ("shared", "webgpu"): 3, ("shared", "opencl"): 3}


def _storage_syncs(scope, target):
    from builders.shared_dyn import exchange
    import tvm

    mod = tvm.IRModule({"exchange": exchange(scope)})
    _, device = lower_device(mod, make_target(target))
    return sum(str(f).count(f'T.tvm_storage_sync("{scope}")') for m in device.values() for f in m.functions.values())


@pytest.mark.parametrize("scope,target", sorted(EMITTED), ids=lambda v: v)
def test_storage_syncs_in_tir_against_barriers_in_the_source(scope, target):
    assert _storage_syncs(scope, target) == 3
    mod = built(SPEC, {"scope": scope}, target)
    assert len(re.findall(BARRIER[target], mod.source)) == EMITTED[scope, target]


def test_metal_codegen_refuses_dynamic_shared_memory():
    assert _storage_syncs("shared.dyn", "metal") == 3
    with pytest.raises(KernelraceError, match="for metal: Unknown storage scope `shared.dyn`"):
        built(SPEC, {"scope": "shared.dyn"}, "metal")


def _errors(scope, target):
    results = check_built(built(SPEC, {"scope": scope}, target), Options(timeout_ms=5000, hints="off"))
    assert [r.status for r in results if r.status == "unknown"] == []
    return {(f.rule, f.second.buffer, f.first.line, f.second.line)
            for r in results for f in r.findings if f.severity == "error"}


def test_webgpu_barriers_dropped_from_shared_dyn_are_reported_as_races():
    src = built(SPEC, {"scope": "shared.dyn"}, "webgpu").source
    assert "var<workgroup> A_sh : array<f32, 64>;" in src
    lines = {what: next(i for i, line in enumerate(src.splitlines(), 1) if line.strip().startswith(what))
             for what in ("A_sh[i32(threadIdx.x)] = X_ptr", "Y_ptr[", "A_sh[i32(threadIdx.x)] = Y_ptr", "Z_ptr[")}
    stage_a, read_a, stage_b, read_b = lines.values()
    # Each dropped barrier leaves a race: write/read of the first exchange, its read against the
    # second write (the storage rewrite put both exchanges in A_sh), write/read of the second, and
    # the second read against the first write (with no barrier it may still see that one).
    assert _errors("shared.dyn", "webgpu") == {
        ("read-after-write", "A_sh", stage_a, read_a),
        ("write-after-read", "A_sh", read_a, stage_b),
        ("read-after-write", "A_sh", stage_b, read_b),
        ("read-after-write", "A_sh", stage_a, read_b),
    }


@pytest.mark.parametrize("scope,target", [("shared", "webgpu"), ("shared.dyn", "cuda"), ("shared", "opencl")])
def test_kept_barriers_leave_no_race(scope, target):
    assert _errors(scope, target) == set()


def test_opencl_shared_dyn_becomes_private_memory_with_no_race():
    src = built(SPEC, {"scope": "shared.dyn"}, "opencl").source
    assert re.search(r"^\s*float A_sh_ptr\[64\];", src, re.M) and "__local" not in src
    assert _errors("shared.dyn", "opencl") == set()


def test_webgpu_merged_buffer_of_two_dtypes_is_refused_in_one_line():
    """Two dtypes in one `shared.dyn` allocation: TVM's WGSL declares `array<u8, 256>` (no WGSL
    type) and stores f32 and f16 values into it; kernelrace names the construct, no traceback."""
    mod = built(SPEC, {"scope": "shared.dyn", "second": "float16"}, "webgpu")
    assert "var<workgroup> buf_dyn_shmem : array<u8, 256>;" in mod.source
    with pytest.raises(KernelraceError, match=r"exchange\.wgsl:\d+:\d+: unsupported construct: type 'u8'"):
        check_built(mod, Options(timeout_ms=5000, hints="off"))


DLIGHT = "builders.shared_dyn:dlight_dyn"
# (workload, target) -> barriers in the source; every storage sync of these is "shared.dyn".
DLIGHT_EMITTED = {("matmul", "cuda"): 2, ("matmul", "webgpu"): 0, ("matmul", "opencl"): 0,
                  ("transpose", "cuda"): 1, ("transpose", "webgpu"): 0, ("transpose", "opencl"): 0}
DLIGHT_SYNCS = {"matmul": 2, "transpose": 1}


def _dlight_syncs(workload, target):
    from builders.shared_dyn import dlight_dyn

    _, device = lower_device(dlight_dyn(workload), make_target(target))
    tir = "".join(str(f) for m in device.values() for f in m.functions.values())
    return tir.count('T.tvm_storage_sync("shared.dyn")'), tir.count("T.tvm_storage_sync(")


@pytest.mark.parametrize("workload,target", sorted(DLIGHT_EMITTED), ids=lambda v: v)
def test_dlight_schedules_in_shared_dyn_keep_their_barriers_on_cuda_only(workload, target):
    assert _dlight_syncs(workload, target) == (DLIGHT_SYNCS[workload],) * 2
    mod = built(DLIGHT, {"workload": workload}, target)
    assert len(re.findall(BARRIER[target], mod.source)) == DLIGHT_EMITTED[workload, target]
    if target == "opencl":   # one private copy per work-item
        assert "__local" not in mod.source


@pytest.mark.parametrize("workload", ["matmul", "transpose"])
def test_metal_refuses_dlight_schedules_in_shared_dyn(workload):
    with pytest.raises(KernelraceError, match="Unknown storage scope `shared.dyn`"):
        built(DLIGHT, {"workload": workload}, "metal")


@pytest.mark.parametrize("workload,buffer,rules", [
    ("transpose", "X_shared_shared_dyn", {"read-after-write"}),
    pytest.param("matmul", "buf_dyn_shmem", {"read-after-write", "write-after-read"},
                 marks=pytest.mark.slow)])   # dlight's matmul on three targets: the slow set
def test_dlight_schedules_in_shared_dyn_race_on_webgpu_only(workload, buffer, rules):
    results = check_built(built(DLIGHT, {"workload": workload}, "webgpu"), Options(timeout_ms=5000, hints="off"))
    errors = [f for r in results for f in r.findings if f.severity == "error"]
    assert {f.rule for f in errors} == rules and {f.second.buffer for f in errors} == {buffer}
    assert all(f.witness["replayed"] for f in errors)
    for target in ("cuda", "opencl"):
        results = check_built(built(DLIGHT, {"workload": workload}, target), Options(timeout_ms=5000, hints="off"))
        assert [f.message for r in results for f in r.findings if f.severity == "error"] == []
