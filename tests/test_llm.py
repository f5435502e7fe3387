"""`kernelrace llm`: every kernel of TVM's LLM runtime for one model shape, with a kernel x target table.

The full corpus takes over a minute per target, so the command-line tests build a cheap subset
(`--only`); the other kernels must still be listed in the table, skipped with a reason."""

import json
from pathlib import Path

import pytest
from test_tvm_corpus import KNOWN_RACES

from analyzer.errors import KernelraceError
from analyzer.tvm_checks import llm

SHAPE = ["--num-qo-heads", "8", "--num-kv-heads", "1", "--head-dim", "128"]
# cheap kernels, among them the known races: merge state (device memory) and the cumsum/sampling scans
ONLY = "_merge_state_inplace,gpu_2d_continuous_cumsum,gpu_multinomial_from_uniform,_copy_single_page,generic_get"
FAST = ["--hints", "off", "--timeout", "5"]


@pytest.fixture(scope="module")
def json_run():
    import io
    from contextlib import redirect_stderr, redirect_stdout

    from analyzer.cli import main

    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(["llm", *SHAPE, "--target", "cuda", "--format", "json", "--only", ONLY, *FAST])
    return code, json.loads(out.getvalue()), err.getvalue()


def test_exit_1_with_the_merge_state_race_and_only_known_races(json_run):
    code, report, err = json_run
    assert code == 1 and err == ""     # not a terminal: no progress bar
    errors = {(f["kernel"], f["rule"], (f["second"]["buffer"] or "").removesuffix("_ptr"))
              for f in report["findings"] if f["severity"] == "error"}
    assert ("merge_state_inplace_kernel", "write-after-read", "S") in errors
    known = {(rule, buf) for races in KNOWN_RACES.values() for rule, buf in races}
    assert {(rule, buf) for _, rule, buf in errors} <= known


@pytest.mark.slow   # a model's whole table: the slow set
def test_table_lists_every_kernel_and_every_skip_has_a_reason(json_run):
    _, report, _ = json_run
    table = report["llm"]
    assert table["shape"]["num_qo_heads"] == 8 and table["shape"]["head_dim"] == 128
    assert table["shape"]["dtype"] == "float16" and table["shape"]["page_size"] == 16
    shape = llm.shape_from({"num_qo_heads": 8, "num_kv_heads": 1, "head_dim": 128}, None)
    names = [e.name for e in llm.entries(shape)]
    assert [r["kernel"] for r in table["rows"]] == names and {r["target"] for r in table["rows"]} == {"cuda"}
    rows = {r["kernel"]: r for r in table["rows"]}
    assert rows["_merge_state_inplace"]["status"] == "findings"
    assert rows["_merge_state_inplace"]["findings"]["error"] >= 1
    assert rows["_copy_single_page"]["status"] == "clean"
    for name in ("_attention_prefill_mla", "_copy_single_page_mla", "_kv_cache_transpose_append_mla",
                 "_kv_cache_debug_get_kv_mla"):
        assert rows[name]["status"] == "skipped" and "--kv-lora-rank" in rows[name]["reason"]
    for name in ("_attention_decode (sliding window)", "_attention_prefill (sliding window)"):
        assert "sliding window not requested" in rows[name]["reason"]
    assert rows["_attention_decode"]["reason"] == "not selected (--only)"
    skipped = [r for r in table["rows"] if r["status"] == "skipped"]
    assert all(r["reason"] for r in skipped)
    assert len(table["skipped"]) == len(skipped)
    # the table counts what the report holds
    assert sum(r["findings"]["error"] for r in table["rows"]) == report["summary"]["errors"]


def test_text_output_has_the_table_then_the_summary(cli):
    code, out, err = cli("llm", *SHAPE, "--target", "cuda,metal", "--only", "_copy_single_page", *FAST)
    assert code == 0 and err == ""
    lines = out.splitlines()
    assert lines[0].startswith("kernelrace llm: num_qo_heads=8, num_kv_heads=1, head_dim=128")
    row = next(line for line in lines if "│ _copy_single_page " in line)
    assert row.count("clean") == 2
    assert any("│ _attention_prefill_mla" in line and "skipped [" in line for line in lines)
    assert any("not an MLA shape: give --kv-lora-rank and --qk-rope-head-dim" in line for line in lines)
    assert any(line.strip().endswith("not selected (--only)") for line in lines)
    assert lines[-1] == "2 kernel(s): 2 clean, 0 with findings, 0 unknown; 0 error(s), 0 warning(s)"
    # -q: the summary line only
    code, out, _ = cli("llm", *SHAPE, "--target", "cuda", "--only", "_copy_single_page", "-q", *FAST)
    assert out.splitlines() == ["1 kernel(s): 1 clean, 0 with findings, 0 unknown; 0 error(s), 0 warning(s)"]


def _config(tmp_path, **fields):
    path = tmp_path / "config.json"
    path.write_text(json.dumps(fields))
    return path


@pytest.mark.parametrize("option", ["--model-config", "--config"])
def test_shape_from_a_hugging_face_config(cli, tmp_path, option):
    cfg = _config(tmp_path, num_attention_heads=8, num_key_value_heads=1, hidden_size=1024, torch_dtype="float16",
                  sliding_window=None, num_hidden_layers=2)
    code, report, err = cli("llm", option, str(cfg), "--target", "cuda", "--only", "_merge_state_inplace",
                            "--format", "json", *FAST)
    assert code == 1, err
    assert report["llm"]["shape"] == {"num_qo_heads": 8, "num_kv_heads": 1, "head_dim": 128, "dtype": "float16",
                                      "page_size": 16, "sliding_window": None, "kv_lora_rank": None,
                                      "qk_rope_head_dim": None}
    (f,) = [f for f in report["findings"] if f["severity"] == "error"]
    assert f["params"] == {"num_heads": 8, "head_dim": 128, "v_dtype": "float16"} and f["rule"] == "write-after-read"


def test_config_missing_key_is_a_one_line_error_naming_file_and_key(cli, tmp_path):
    cfg = _config(tmp_path, num_key_value_heads=1, head_dim=128)
    code, out, err = cli("llm", "--model-config", str(cfg), "--target", "cuda")
    assert code == 2 and out == ""
    assert err == f"kernelrace: error: {cfg}: missing key 'num_attention_heads'\n"
    code, _, err = cli("llm", "--config", str(cfg), "--target", "cuda")
    assert code == 2 and err == f"kernelrace: error: {cfg}: missing key 'num_attention_heads'\n"


def test_bad_or_missing_config_file_is_a_one_line_error(cli, tmp_path):
    bad = tmp_path / "config.json"
    bad.write_text("{\"num_attention_heads\": 8,")
    code, _, err = cli("llm", "--model-config", str(bad))
    assert code == 2 and err.startswith(f"kernelrace: error: {bad}: invalid JSON") and err.count("\n") == 1
    code, _, err = cli("llm", "--model-config", str(tmp_path / "nope.json"))
    assert code == 2 and err == f"kernelrace: error: {tmp_path / 'nope.json'}: no such file\n"
    cfg = _config(tmp_path, num_attention_heads=8, head_dim="big")
    code, _, err = cli("llm", "--model-config", str(cfg))
    assert code == 2 and err == f"kernelrace: error: {cfg}: key 'head_dim': expected a positive integer, got \"big\"\n"


def test_usage_errors(cli):
    assert cli("llm", "--num-qo-heads", "8", "--head-dim", "128")[2] == \
        "kernelrace: error: llm: --num-kv-heads is required (or --model-config config.json)\n"
    code, _, err = cli("llm", *SHAPE, "--kv-lora-rank", "512")
    assert code == 2 and "MLA needs both --kv-lora-rank and --qk-rope-head-dim" in err
    code, _, err = cli("llm", *SHAPE, "--only", "nonesuch")
    assert code == 2 and err.startswith("kernelrace: error: --only: no kernel matches 'nonesuch'")
    code, _, err = cli("llm", *SHAPE, "--target", "cuda,rocm")
    assert code == 2 and "unsupported target 'rocm'" in err


def test_model_config_fields():
    read = lambda tmp, **kw: llm.read_model_config(str(_config(tmp, **kw)))  # noqa: E731
    import tempfile
    from pathlib import Path

    tmp = Path(tempfile.mkdtemp())
    got = read(tmp, num_attention_heads=32, hidden_size=4096, torch_dtype="bfloat16", sliding_window=4096,
               use_sliding_window=False, kv_lora_rank=512, qk_rope_head_dim=64)
    assert got == {"num_qo_heads": 32, "num_kv_heads": 32, "head_dim": 128, "dtype": "bfloat16",
                   "kv_lora_rank": 512, "qk_rope_head_dim": 64}
    got = read(tmp, text_config={"num_attention_heads": 16, "num_key_value_heads": 8, "head_dim": 256,
                                 "sliding_window": 512}, dtype="float32")
    assert got == {"num_qo_heads": 16, "num_kv_heads": 8, "head_dim": 256, "dtype": "float32", "sliding_window": 512}
    with pytest.raises(KernelraceError, match=r"key 'torch_dtype': unsupported dtype \"int8\""):
        read(tmp, num_attention_heads=8, head_dim=64, torch_dtype="int8")
    with pytest.raises(KernelraceError, match="missing key 'head_dim'"):
        read(tmp, num_attention_heads=8)
    with pytest.raises(KernelraceError, match="'hidden_size': 1001 is not a multiple"):
        read(tmp, num_attention_heads=8, hidden_size=1001)


def test_entries_follow_the_shape():
    shape = llm.shape_from({"num_qo_heads": 16, "num_kv_heads": 16, "head_dim": 576, "kv_lora_rank": 512,
                            "qk_rope_head_dim": 64, "sliding_window": 2048, "dtype": None}, None)
    es = {e.name: e for e in llm.entries(shape)}
    assert not any(e.skip for e in es.values())
    assert es["_attention_prefill_mla"].params["d_latent"] == 512 and es["_attention_prefill_mla"].params["d_rope"] == 64
    assert es["_kv_cache_transpose_append_mla"].params["d_qk"] == 576
    assert es["_attention_prefill (sliding window)"].params["sliding_window_size"] == 2048
    assert es["_attention_decode (sliding window)"].params["sliding_window"] is True
    assert len(es) == len(llm.entries(shape))   # row names are unique


def test_a_kernel_that_cannot_be_analysed_is_a_failed_cell_and_exit_2(cli, monkeypatch):
    import analyzer.pipeline

    def broken(mod, options):
        raise KernelraceError("_copy_single_page.cu:1:1: syntax error")

    monkeypatch.setattr(analyzer.pipeline, "check_built", broken)   # in this process: --jobs 1
    code, out, err = cli("llm", *SHAPE, "--target", "cuda", "--only", "_copy_single_page", "--format", "json",
                         "--jobs", "1")
    assert code == 2
    report = json.loads(out)     # the report is still written, with the cell marked failed
    assert err == "kernelrace: error: 1 kernel/target cell(s) could not be built or analysed (marked failed in the table)\n"
    (row,) = [r for r in report["llm"]["rows"] if r["status"] != "skipped"]
    assert row["kernel"] == "_copy_single_page" and row["status"] == "failed"
    assert row["reason"] == "_copy_single_page.cu:1:1: syntax error"


PANEL = Path(__file__).resolve().parent.parent / "benchmarks" / "model_configs"


def test_published_configs_read_as_published():
    """The panel's configs, as the Hub has them: head_dim absent (hidden / heads), text_config,
    MLA without head_dim (qk_nope + qk_rope), rope_scaling objects, sliding_window off or null."""
    shapes = {Path(p).stem: llm.shape_from({}, p) for p in llm.model_config_files([str(PANEL)])}
    assert len(shapes) >= 8
    assert (shapes["phi-2"].head_dim, shapes["phi-2"].num_kv_heads, shapes["phi-2"].dtype) == (80, 32, "float16")
    assert shapes["phi-3-mini-128k-instruct"].head_dim == 96
    assert (shapes["qwen2-7b-instruct"].num_qo_heads, shapes["qwen2-7b-instruct"].num_kv_heads,
            shapes["qwen2-7b-instruct"].sliding_window) == (28, 4, None)   # use_sliding_window: false
    assert (shapes["gemma-3-4b-it"].head_dim, shapes["gemma-3-4b-it"].sliding_window) == (256, 1024)
    mla = shapes["deepseek-v2-lite-chat"]
    assert (mla.head_dim, mla.kv_lora_rank, mla.qk_rope_head_dim) == (192, 512, 64)
    assert {s.dtype for s in shapes.values()} == {"bfloat16", "float16", "float32"}


def test_bad_rope_scaling_is_one_line(cli, tmp_path):
    cfg = _config(tmp_path, num_attention_heads=8, head_dim=64, rope_scaling="longrope")
    code, _, err = cli("llm", "--model-config", str(cfg))
    assert code == 2 and err == (f"kernelrace: error: {cfg}: key 'rope_scaling': expected an object with a "
                                 f"'rope_type', got \"longrope\"\n")


def test_several_models_one_table_each_and_shared_shapes_built_once(cli, tmp_path, monkeypatch):
    import shutil

    import analyzer.pipeline

    for name in ("llama-3.1-8b-instruct.json", "qwen2-7b-instruct.json"):
        shutil.copy(PANEL / name, tmp_path / name)
    shutil.copy(PANEL / "llama-3.1-8b-instruct.json", tmp_path / "llama-again.json")
    builds = []
    real = analyzer.pipeline.build
    monkeypatch.setattr(analyzer.pipeline, "build", lambda *a: builds.append(a) or real(*a))
    code, report, _ = cli("llm", "--model-config", str(tmp_path), "--target", "cuda", "--only", "merge_state",
                          "--format", "json", "--jobs", "1")
    assert code == 1
    tables = report["llm"]
    assert [t["models"] for t in tables] == [[str(tmp_path / "llama-3.1-8b-instruct.json"),
                                              str(tmp_path / "llama-again.json")],
                                             [str(tmp_path / "qwen2-7b-instruct.json")]]
    assert len(builds) == 2      # the two llama configs share one shape


@pytest.mark.parametrize("model,only", [
    ("phi-2", "_kv_cache_transpose_append,_kv_cache_debug_get_kv"),               # head_dim 80, fp16
    ("phi-3-mini-128k-instruct", "_kv_cache_transpose_append,_compact_kv_copy"),  # head_dim 96, group 1
    pytest.param("deepseek-v2-lite-chat", "_kv_cache_transpose_append,_kv_cache_debug_get_kv",   # MLA (576 wide)
                 marks=pytest.mark.slow),
])
def test_published_configs_page_kernels_have_no_warning_and_no_unknown(cli, model, only):
    """A small slice of the model panel (docs/benchmarks.md): the page kernels of configs whose
    head dims are not powers of two, as published, with the built-in contracts and the default
    budget: nothing but clean kernels (they had unknowns, warnings and false errors)."""
    code, report, err = cli("llm", "--model-config", str(PANEL / f"{model}.json"), "--target", "cuda",
                            "--only", only, "--hints", "off", "--format", "json")
    assert code == 0, err
    assert report["findings"] == [] or {f["severity"] for f in report["findings"]} == {"note"}
    assert {k["status"] for k in report["kernels"]} == {"clean"}
