"""dlight-scheduled TE workloads (`analyzer.workloads`): each builds for CUDA, Metal and Vulkan,
and kernelrace finds no race in any of them and decides every pair (no `unknown`).

The only findings on these builds are `redundant-barrier` notes. Read against the emitted source,
they sit on barriers TVM's cross-thread reduction lowering inserts that keep apart only accesses
of one thread (thread 0 stores `red_result` and loads it back, CUDA and Metal; Vulkan's barrier
after the last tree step) or that come before any access to the reduction's shared buffer
(Vulkan's leading `barrier()`); no race was found, so no race is pinned here."""

import pytest

from analyzer.pipeline import Options, check_built
from analyzer.tvm import workloads as W
from conftest import Precomputed, built

# Long: in the slow set, which .ci/run runs after the default run (pyproject.toml's markers).
pytestmark = pytest.mark.slow

TARGETS = ("cuda", "metal", "vulkan")
# Vulkan builds (warp size 1: 64 threads, reductions through shared memory) unroll each thread's
# strip of a row into SPIR-V: at 4096 columns a norm kernel is ~6000-9000 SPIR-V lines and checks
# in 10-20 s, at 1024 in ~1 s, with the same schedule (same threads, same reduction tree).
VULKAN_COLS = 1024
def _params(params, target):
    if target == "vulkan" and params.get("cols", 0) > VULKAN_COLS:
        return {**params, "cols": VULKAN_COLS}
    return params


def _id(spec, params, target):
    shape = ",".join(f"{k}={v}" for k, v in params.items() if k not in ("dtype", "schedule_target"))
    return f"{spec.split(':')[1]}-{shape}-{params['dtype']}-{target}"


def cases(sweep: bool = False) -> list[tuple[str, dict, str]]:
    """(builder, parameters, target): every workload in float16 on every target, and float32 for a
    couple (the matmul, the softmax with a symbolic row count). The tests take a pinned slice of
    it (`sweep=False`); `benchmarks/corpus_sweep.py --dlight` runs it all. The slice leaves out
    the float32 builds but on metal (the same schedules as float16 on each target, at twice the
    element size) and, on cuda, the matmul with static rows (its symbolic twin m=n is kept: the
    same schedule, one of the two costliest checks of the sweep)."""
    out = []
    for target in TARGETS:
        for spec, params in W.workloads("float16", W.SCHEDULE_TARGET[target]):
            if sweep or not (target == "cuda" and spec.endswith(":matmul") and params["m"] != "n"):
                out.append((spec, _params(params, target), target))
        if sweep or target == "metal":
            for spec, params in W.workloads("float32", W.SCHEDULE_TARGET[target]):
                if (spec.endswith(":matmul") and params["m"] == 256) or (spec.endswith(":softmax") and params["rows"] == "n"):
                    out.append((spec, _params(params, target), target))
    return out


def _workload(spec, params, target):
    mod = built(spec, params, target)
    return [k.name for k in mod.kernels], check_built(mod, Options(timeout_ms=5000, hints="off"))


def check_workload(spec, params, target, got=None) -> None:
    names, results = got or _workload(spec, params, target)
    assert names == [f"{spec.split(':')[1]}_kernel"]
    assert results
    errors = [f"{f.rule} {f.second.buffer}: {f.message}" for r in results for f in r.findings if f.severity == "error"]
    assert errors == []
    assert [r.status for r in results if r.status == "unknown"] == []


# Built and checked two at a time, one per core, as the first case runs.
CHECKED = Precomputed(_workload, ("spec", "params", "target"))


@pytest.mark.xdist_group("dlight_workloads")   # one worker computes every case (conftest.Precomputed)
@pytest.mark.parametrize("spec,params,target", [pytest.param(*c, id=_id(*c)) for c in cases()])
def test_builds_and_has_no_race(spec, params, target, request):
    check_workload(spec, params, target, CHECKED(request))


def test_every_workload_is_in_the_sweep_static_and_symbolic():
    names = {spec.split(":")[1] for spec, _ in W.WORKLOADS}
    assert names == {"matmul", "gemv", "softmax", "layer_norm", "rms_norm", "sum", "transpose"}
    assert any(p.get("m") == "n" or p.get("rows") == "n" for _, p in W.WORKLOADS)   # symbolic extents
    assert all(p["dtype"] == "float16" and p["schedule_target"] == "cuda" for _, p in W.WORKLOADS)
    for spec, params in W.workloads("float32", "opencl"):
        assert params["dtype"] == "float32" and params["schedule_target"] == "opencl"


@pytest.mark.parametrize("name", ["matmul", "softmax", "transpose"])
def test_builders_return_a_scheduled_module_named_after_the_workload(name):
    """kernelrace builds the module as is: dlight's Fallback is applied only to a function without
    `tirx.is_scheduled`, and the kernel is named after `global_symbol`."""
    mod = getattr(W, name)(dtype="float16", schedule_target="opencl")
    (gv, func), = mod.functions.items()
    assert gv.name_hint == func.attrs["global_symbol"] == name
    assert func.attrs["tirx.is_scheduled"]
