"""`kernelrace model`: a Relax model's kernels, lowered as MLC lowers them, scheduled by dlight,
built one kernel and target at a time in worker processes, checked and tabulated.

The reference model of a config is built from tests/data/models/tiny_llama.json (tiny sizes; the
kernels are those of any Llama shape). Building every kernel on a target takes tens of seconds on
two cores, so those runs are in the slow set; reading configs is not."""

import json
from pathlib import Path

import pytest

from analyzer.errors import KernelraceError
from analyzer.tvm import reference_model

TINY = str(Path(__file__).parent / "data" / "models" / "tiny_llama.json")
FAST = ["--hints", "off", "--no-cache", "--no-config"]


def _config(tmp_path, **fields):
    data = json.loads(Path(TINY).read_text())
    data.update(fields)
    data = {k: v for k, v in data.items() if v is not None}
    path = tmp_path / "config.json"
    path.write_text(json.dumps(data))
    return str(path)


def test_a_config_gives_the_reference_models_shape(tmp_path):
    s = reference_model.read_config(TINY)
    assert (s.family, s.hidden_size, s.intermediate_size, s.num_attention_heads, s.num_key_value_heads,
            s.head_dim, s.vocab_size, s.dtype) == ("llama", 64, 128, 2, 1, 32, 128, "float16")
    # Gemma: GELU (tanh), tied embeddings, (1 + weight) norms; Qwen2: biased QKV; head_dim derived
    g = reference_model.read_config(_config(tmp_path, model_type="gemma", head_dim=None))
    assert (g.family, g.hidden_act, g.tie_word_embeddings, g.head_dim) == ("gemma", "gelu_pytorch_tanh", True, 32)
    assert reference_model.read_config(_config(tmp_path, model_type="qwen2")).qkv_bias
    assert reference_model.read_config(_config(tmp_path, model_type="mistral")).family == "llama"


@pytest.mark.parametrize("fields, message", [
    ({"vocab_size": None}, "missing key 'vocab_size'"),
    ({"hidden_size": 0}, "key 'hidden_size': expected a positive integer, got 0"),
    ({"num_key_value_heads": 3, "num_attention_heads": 4}, "is not a multiple of num_key_value_heads (3)"),
    ({"model_type": "t5"}, "key 'model_type': \"t5\" is not a decoder-only family"),
    ({"hidden_act": "relu"}, "key 'hidden_act': \"relu\" is not one of"),
])
def test_a_bad_config_is_one_line_naming_the_file_and_key(tmp_path, cli, fields, message):
    path = _config(tmp_path, **fields)
    with pytest.raises(KernelraceError, match=message.replace("(", r"\(").replace(")", r"\)")):
        reference_model.read_config(path)
    code, out, err = cli("model", path, "--target", "opencl", *FAST)
    assert code == 2 and out == "" and err.startswith(f"kernelrace: error: {path}: ")
    assert len(err.strip().splitlines()) == 1


def test_a_builder_that_returns_no_model_is_bad_input(cli):
    code, _, err = cli("model", "builders.grid_races:tiles", "--target", "opencl", *FAST)
    assert code == 2 and "expected a Relax IRModule or an (nn.Module, export_tvm spec) pair" in err


def test_the_reference_models_kernels_are_the_ones_mlc_ships():
    import tvm

    from analyzer.tvm.relax_kernels import kernels, lower_relax

    mod = reference_model.export(reference_model.read_config(TINY))
    names = {gv.name_hint for gv, f in mod.functions.items() if isinstance(f, tvm.relax.Function)}
    assert names == {"embed", "prefill", "decode", "batch_prefill", "batch_decode", "softmax_with_temperature"}
    found = kernels(lower_relax(mod, tvm.target.Target("opencl")))
    by_name = {k.name: k for k in found}
    # Two layers of four built (identical layers give identical kernels); reshapes are views.
    assert not any(k.startswith("reshape") for k in by_name)
    assert {"embed"} == set(by_name["take1"].callers)
    assert set(by_name["softmax"].callers) == {"softmax_with_temperature"}
    assert any(k.startswith("rms_norm") and "decode" in by_name[k].callers for k in by_name)
    assert any("silu" in k for k in by_name) and any("NT_matmul" in k for k in by_name)
    assert len(found) == len({k.name for k in found})
    # PrimFuncs equal up to their names (a kernel per layer) are one kernel, with every name.
    lowered = lower_relax(mod, tvm.target.Target("opencl"))
    lowered["softmax_again"] = lowered["softmax"]
    again = {k.name: k for k in kernels(lowered)}
    assert "softmax_again" not in again and again["softmax"].aliases == ["softmax_again"]


@pytest.mark.slow   # a model lowered in crashing workers: the slow set (test_inputs_and_jobs kills a worker in the default run)
def test_a_crash_under_one_target_is_unknown_there_and_the_rest_goes_on(cli):
    # The builder kills its process with SIGSEGV under Metal (TVM's Metal steps do, at times):
    # every Metal cell is `unknown` naming the signal and the step, OpenCL's are checked, exit 0
    # (unknowns are warnings), never an internal error. One job: isolated all the same.
    code, report, err = cli("model", "builders.relax_block:crashes_under_metal", "--target", "opencl,metal",
                            "--jobs", "1", "--format", "json", *FAST)
    assert code == 0 and err == ""
    rows = report["llm"]["rows"]
    metal = [r for r in rows if r["target"] == "metal"]
    assert metal and all(r["status"] == "unknown" and "signal SIGSEGV" in r["reason"]
                         and "lowering the Relax module" in r["reason"] for r in metal)
    opencl = [r for r in rows if r["target"] == "opencl"]
    assert {r["kernel"] for r in opencl} == {r["kernel"] for r in metal}
    assert all(r["status"] == "clean" and r["schedule"] for r in opencl)
    assert {r["schedule"] for r in opencl} >= {"Matmul", "Reduction", "GeneralReduction"}
    unknown = [f for f in report["findings"] if f["rule"] == "unknown"]
    assert len(unknown) == len(metal)


@pytest.mark.slow
def test_the_tiny_config_on_every_target(cli):
    code, out, err = cli("model", TINY, *FAST, "--jobs", "2")
    assert code == 0 and err == ""
    lines = out.splitlines()
    title = next(i for i, line in enumerate(lines) if line.startswith("kernelrace model: tiny_llama (family=llama"))
    header = lines[title + 2]
    assert [c.strip() for c in header.strip("┃").split("┃")[1:]] == ["cuda", "metal", "vulkan", "webgpu", "opencl"]
    assert any("│ take1 (embed)" in line for line in lines)
    assert any("│ softmax (softmax_with_temperature)" in line for line in lines)
    summary = lines[-1]
    assert " 0 unknown; 0 error(s), 0 warning(s)" in summary


@pytest.mark.slow
def test_json_rows_name_schedules_and_the_matmul_deviation(cli):
    code, report, err = cli("model", TINY, "--target", "cuda,metal", "--format", "json", *FAST, "--jobs", "2")
    assert code == 0 and err == ""
    table = report["llm"]
    assert table["command"] == "model" and table["model"] == "tiny_llama" and table["shape"]["head_dim"] == 32
    rows = table["rows"]
    assert {r["status"] for r in rows} <= {"clean"}
    matmul = [r for r in rows if r["schedule"].startswith("Matmul")]
    assert matmul and all("SIMT matmul" in r["schedule"] for r in matmul)
    assert any(r["schedule"] == "GEMV" for r in rows)


@pytest.mark.parametrize("targets", ["cuda", pytest.param("metal,vulkan", marks=pytest.mark.slow)])
def test_lint_builds_the_primfuncs_a_relax_model_lowers_to(cli, targets):
    # Relax's lowering leaves its PrimFuncs without `global_symbol` (TVM: "This pass must be called
    # after MakePackedAPI"); kernelrace names each after its global variable, as Relax's VM build does.
    code, report, err = cli("lint", "builders.relax_block:block_kernels", "--target", targets,
                            "--format", "json", *FAST)
    assert code == 0 and err == ""
    kernels = {(k["kernel"], k["target"]) for k in report["kernels"]}
    for t in targets.split(","):
        assert {"rms_norm_kernel", "softmax_kernel"} <= {k for k, tt in kernels if tt == t}
    assert report["summary"]["unknown"] == 0


def test_lint_of_a_relax_module_points_to_model(cli):
    code, _, err = cli("lint", "builders.relax_block:block_module", "--target", "opencl", *FAST)
    assert code == 2 and "returned a Relax IRModule" in err and "kernelrace model builders.relax_block" in err
