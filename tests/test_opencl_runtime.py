"""`kernelrace confirm --runtime opencl`: TVM builds run on a real OpenCL device (PoCL on the CPU,
from the project's dependencies), as built and with the fix hint applied (analyzer/dynamic/opencl_run.py)."""

from __future__ import annotations

import numpy as np
import pytest

from analyzer.dynamic import opencl_run
from analyzer.tvm.build import build_lowered

SEED_BUILDER = "tvm.relax.frontend.nn.llm._decode_kernels:_merge_state_inplace"
SEED_PARAMS = ["--param", "num_heads=8", "--param", "head_dim=256", "--param", "v_dtype=float32"]
CUMSUM = "tvm.relax.backend.gpu_generic:gpu_2d_continuous_cumsum"


@pytest.fixture(scope="module")
def device():
    return opencl_run.find_device()


def _merge_reference(inputs):
    """What merge_state_inplace should compute, in float64."""
    s, v, so, vo = (inputs[k].astype(np.float64) for k in ("S", "V", "S_other", "V_other"))
    m = np.maximum(s, so)
    a, b = np.exp2(s - m), np.exp2(so - m)
    return {"V": v * (a / (a + b))[..., None] + vo * (b / (a + b))[..., None], "S": np.log2(a + b) + m}


def _wrong(out, ref):
    return int(np.sum(~np.isclose(out, ref, rtol=1e-4, atol=1e-5)))


def test_the_seed_race_corrupts_s_and_v_on_pocl_and_the_fix_hint_computes_the_reference(cli, device):
    code, report, err = cli("confirm", SEED_BUILDER, *SEED_PARAMS, "--runtime", "opencl", "--scalar", "N=4",
                            "--scalar", "H=8", "--scalar", "D=256", "--format", "json")
    assert code == 1, err
    (c,) = [f["confirmation"] for f in report["findings"] if "confirmation" in f]
    assert c["status"] == "differs" and c["runtime"] == "opencl" and c["launches"] == 1
    differ = {b["buffer"]: (b["differ"], b["elements"]) for b in c["buffers"]}
    assert differ["S"] == (32, 32) and differ["V"][1] == 4 * 8 * 256 and differ["V"][0] > 4 * 8 * 200
    assert "S: 32/32 elements differ between the build and the fixed build" in "\n".join(c["lines"])

    # Against NumPy: the build is wrong, the source with the hint applied is right.
    built, mod, host = build_lowered(SEED_BUILDER, {"num_heads": 8, "head_dim": 256, "v_dtype": "float32"},
                                     "opencl")
    plan = opencl_run.plan(mod, host, {"N": 4, "H": 8, "D": 256}, seed=0)
    ref = _merge_reference(plan.inputs)
    as_built = opencl_run.run(device, opencl_run.compilable(built.source), plan)
    (finding,) = [f for f in report["findings"] if "confirmation" in f]
    fixed = opencl_run.run(device, opencl_run.compilable(opencl_run.apply_fix(built.source, finding["fix"])), plan)
    assert _wrong(as_built["S"], ref["S"]) == 32 and _wrong(as_built["V"], ref["V"]) > 4 * 8 * 200
    assert _wrong(fixed["S"], ref["S"]) == 0 and _wrong(fixed["V"], ref["V"]) == 0


def test_the_cumsum_launches_run_in_host_order_and_give_wrong_prefix_sums(device):
    built, mod, host = build_lowered(CUMSUM, {}, "opencl")
    plan = opencl_run.plan(mod, host, {"m": 2, "n": 1000}, seed=1)
    # The host scans 512-element blocks, then the blocks' sums, then adds them back: three launches.
    assert [(x.kernel, x.grid, x.block) for x in plan.launches] == [
        ("gpu_2d_continuous_cumsum_kernel", (2, 2, 1), (32, 4, 1)),
        ("gpu_2d_continuous_cumsum_kernel_1", (1, 2, 1), (32, 4, 1)),
        ("gpu_2d_continuous_cumsum_kernel_3", (2, 2, 1), (32, 4, 1))]
    out = opencl_run.run(device, opencl_run.compilable(built.source), plan)["Out"]
    ref = np.cumsum(plan.inputs["A"], axis=1)
    wrong = out != ref
    assert not wrong[:, :8].any() and wrong[:, 8:].mean() > 0.95     # every Hillis-Steele step races


def test_no_device_says_what_to_install(cli, monkeypatch):
    import pyopencl

    monkeypatch.setattr(pyopencl, "get_platforms", lambda: [])
    code, out, err = cli("confirm", SEED_BUILDER, *SEED_PARAMS, "--runtime", "opencl", "--scalar", "N=1")
    assert code == 2 and "pip install 'kernelrace[opencl]'" in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_no_pyopencl_says_what_to_install(cli, monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "pyopencl", None)     # `import pyopencl` raises ImportError
    code, out, err = cli("confirm", SEED_BUILDER, *SEED_PARAMS, "--runtime", "opencl", "--scalar", "N=1")
    assert code == 2 and "pyopencl is not installed" in err and "pip install 'kernelrace[opencl]'" in err


def test_missing_shapes_are_named(cli, device):
    code, out, err = cli("confirm", SEED_BUILDER, *SEED_PARAMS, "--runtime", "opencl", "--scalar", "N=1")
    assert code == 2 and "--scalar H=INT --scalar D=INT" in err


def test_runtime_opencl_refuses_another_target_and_files(cli, tmp_path):
    code, out, err = cli("confirm", SEED_BUILDER, "--runtime", "opencl", "--target", "cuda")
    assert code == 2 and "--target cuda" in err
    path = tmp_path / "k.cl"
    path.write_text("__kernel void f(__global int* a) { a[0] = 1; }\n")
    code, out, err = cli("confirm", str(path), "--runtime", "opencl")
    assert code == 2 and "TVM builder" in err


def test_fix_hints_apply_to_the_source_text():
    src = "__kernel void f(__global float* s) {\n  float x = s[0];\n  s[0] = x + 1.0f;\n}\n"
    fixed = opencl_run.apply_fix(src, {"text": "insert `barrier(CLK_GLOBAL_MEM_FENCE);` before line 3, and let one "
                                               "thread write: guard line 3 with `if (get_local_id(0) == 0)` (every"})
    assert fixed.splitlines()[2:4] == ["  barrier(CLK_GLOBAL_MEM_FENCE);",
                                       "  if (get_local_id(0) == 0) { s[0] = x + 1.0f; }"]
    loop = ("__kernel void f(__global float* s) {\n  for (int i = 0; i < 4; ++i) {\n    if (i) {\n      s[i] = 1;\n"
            "    } else {\n      s[0] = 2;\n    }\n  }\n}\n")
    fixed = opencl_run.apply_fix(loop, {"text": "insert `barrier(CLK_LOCAL_MEM_FENCE);` at the end of the enclosing "
                                                "block, after the statement starting at line 3"})
    assert fixed.splitlines()[6:8] == ["    }", "    barrier(CLK_LOCAL_MEM_FENCE);"]
    with pytest.raises(ValueError):
        opencl_run.apply_fix(src, {"text": "something else"})


def test_mid_expression_declarations_move_before_their_statement():
    src = ("__kernel void f(__global int* out, int n) {\n"
           "    out[((      int rmod_1 = ((convert_int(get_group_id(0))) % n);\n"
           "      int rdiv_1 = ((convert_int(get_group_id(0))) / n);\n"
           "select((rdiv_1 - 1), rdiv_1, rmod_1 >= 0) * 4) + (convert_int(get_local_id(0))))] = 1;\n}\n")
    assert opencl_run.compilable(src).splitlines()[1:4] == [
        "    int rmod_1 = ((convert_int(get_group_id(0))) % n);",
        "    int rdiv_1 = ((convert_int(get_group_id(0))) / n);",
        "    out[((select((rdiv_1 - 1), rdiv_1, rmod_1 >= 0) * 4) + (convert_int(get_local_id(0))))] = 1;"]


def test_the_hoisted_declarations_compile(device):
    import pyopencl as cl

    src = ("__kernel void f(__global int* out, int n) {\n"
           "    out[((      int rmod_1 = ((convert_int(get_group_id(0))) % n);\n"
           "      int rdiv_1 = ((convert_int(get_group_id(0))) / n);\n"
           "select((rdiv_1 - 1), rdiv_1, rmod_1 >= 0) * 4) + (convert_int(get_local_id(0))))] = 1;\n}\n")
    cl.Program(cl.Context([device]), opencl_run.compilable(src)).build()


def test_a_crashing_run_is_one_error_not_the_end_of_kernelrace(device):
    from analyzer.errors import KernelraceError
    from analyzer.tvm.launches import Launch, Storage

    src = "__kernel void f(__global int* a, int n) { a[n] = 1; }"
    storages = {"a": Storage("a", "int32", (4,), True)}
    ok = opencl_run.Plan([Launch("f", ["a", 1], (1, 1, 1), (1, 1, 1))], storages, {"a": np.zeros(4, np.int32)})
    (out,) = opencl_run.run_isolated([src], ok)
    assert out["a"].tolist() == [0, 1, 0, 0]
    wild = opencl_run.Plan([Launch("f", ["a", 1 << 30], (1, 1, 1), (1, 1, 1))], storages, {"a": np.zeros(4, np.int32)})
    with pytest.raises(KernelraceError, match="the OpenCL run crashed"):
        opencl_run.run_isolated([src], wild)


def test_the_sequence_prefill_compiles_once_its_declarations_move_and_computes_attention(device):
    # TVM 0.27 prints `int rmod_N = ...;` inside this kernel's vstore2 statements: no compiler takes it.
    spec = "tvm.relax.frontend.nn.llm._prefill_kernels:_attention_sequence_prefill"
    built, mod, host = build_lowered(spec, {"h_kv": 8, "h_q": 32, "d": 128, "dtype": "float32"}, "opencl")
    assert "(      int rmod_" in built.source
    plan = opencl_run.plan(mod, host, {"batch_size": 1, "qo_len": 16, "kv_len": 16}, seed=0)
    out = opencl_run.run(device, opencl_run.compilable(built.source), plan)["output"]
    q, k, v = (plan.inputs[x].astype(np.float64) for x in "qkv")
    k, v = np.repeat(k, 4, axis=2), np.repeat(v, 4, axis=2)         # 32 query heads share 8 kv heads
    s = np.einsum("bqhd,bkhd->bhqk", q, k)
    w = np.exp(s - s.max(-1, keepdims=True))
    ref = np.einsum("bhqk,bkhd->bqhd", w / w.sum(-1, keepdims=True), v)
    assert np.abs(out - ref).max() < 1e-4
