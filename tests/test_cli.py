"""The command line: exit statuses, one-line errors, JSON shape, rules and explain."""

import subprocess
import sys

from conftest import FIXTURES

RACY = FIXTURES / "cuda" / "neighbour_shift.cu"
FIXED = FIXTURES / "cuda" / "neighbour_shift_fixed.cu"


def test_exit_status_1_on_error_finding_and_0_when_clean(cli):
    assert cli("check", str(RACY), "--block-dim", "128")[0] == 1
    assert cli("check", str(FIXED), "--block-dim", "128")[0] == 0


def test_json_report_names_both_accesses_and_the_witness(cli):
    code, report, _ = cli("check", str(RACY), "--block-dim", "128", "--format", "json")
    (f,) = report["findings"]
    assert f["rule"] == "read-after-write" and f["severity"] == "error"
    assert f["params"] is None and f["target"] is None and f["kernel"] == "neighbour_shift"
    assert f["first"] == {"file": str(RACY), "line": 7, "col": 5, "kind": "write", "buffer": "sh", "memory": "shared",
                          "origin": None}
    assert f["second"]["line"] == 8 and f["second"]["kind"] == "read"
    w = f["witness"]
    # the writer stores element e and the reader, one thread below, reads (tid + 1) % 128 == e
    assert w["first_thread"][0] == w["element"]
    assert (w["second_thread"][0] + 1) % 128 == w["element"]
    assert w["first_thread"] != w["second_thread"] and w["block"] == [0, 0, 0]
    assert report["summary"]["errors"] == 1 and report["summary"]["kernels"] == 1


def test_missing_file_is_one_line_error_exit_2(cli, tmp_path):
    code, out, err = cli("check", str(tmp_path / "nope.cu"))
    assert code == 2
    assert err.strip() == f"kernelrace: error: {tmp_path / 'nope.cu'}: no such file"


def test_missing_directory_is_missing_not_an_unknown_language(cli, tmp_path):
    # `kernelrace check kernels/` with a typo: nothing there to take a language from.
    code, out, err = cli("check", str(tmp_path / "kernals"))
    assert code == 2 and out == ""
    assert err.strip() == f"kernelrace: error: {tmp_path / 'kernals'}: no such file or directory"


def test_syntax_error_exit_2_with_location(cli, tmp_path):
    bad = tmp_path / "bad.cu"
    bad.write_text("__global__ void k(int* a) {\n  a[0] = = 1;\n}\n")
    code, out, err = cli("check", str(bad))
    assert code == 2 and out == ""
    assert err.startswith(f"kernelrace: error: {bad}:2:10: syntax error")
    assert len(err.strip().splitlines()) == 1


def test_unsupported_construct_exit_2_with_location(cli, tmp_path):
    bad = tmp_path / "goto_back.cu"
    bad.write_text("__global__ void k(int* a) {\nagain:\n  a[0] = 1;\n  if (a[1]) goto again;\n}\n")
    code, out, err = cli("check", str(bad))
    assert code == 2
    assert f"{bad}:4:13: unsupported construct: goto again (to an earlier label" in err


def test_builder_that_raises_is_named_with_its_parameters(cli):
    code, out, err = cli("lint", "tvm.relax.frontend.nn.llm._decode_kernels:_merge_state_inplace",
                         "--target", "cuda", "--param", "num_heads=8", "--param", "head_dim=128",
                         "--param", "bogus=1")
    assert code == 2
    assert "_merge_state_inplace(num_heads=8, head_dim=128, bogus=1) raised TypeError" in err
    assert "Traceback" not in err


def test_unknown_builder_module_exit_2(cli):
    code, _, err = cli("lint", "no_such_module_xyz:f", "--target", "cuda")
    assert code == 2 and "cannot import module 'no_such_module_xyz'" in err


def test_bad_usage_exit_2(cli):
    import pytest
    with pytest.raises(SystemExit) as exc:
        cli("check", str(RACY), "--block-dim", "0,x")
    assert exc.value.code == 2


def test_rules_and_explain(cli):
    code, out, _ = cli("rules")
    assert code == 0
    for name in ("write-after-read", "read-after-write", "write-after-write", "divergent-barrier"):
        assert name in out
    code, out, _ = cli("explain", "write-after-read")
    assert code == 0 and "## Why is this bad?" in out


def test_console_script_runs_without_traceback():
    # The installed entry point, as a user runs it.
    proc = subprocess.run([sys.executable, "-m", "analyzer.cli", "check", str(RACY), "--block-dim", "128"],
                          capture_output=True, text=True)
    assert proc.returncode == 1
    assert "read-after-write" in proc.stdout and "Traceback" not in proc.stderr


def test_param_values_are_python_literals_and_bare_words_are_strings():
    from analyzer.cli import _param

    assert _param("rope_scaling={}") == ("rope_scaling", [{}])
    assert _param("head_dim=128,256,512") == ("head_dim", [128, 256, 512])
    assert _param("dtype=float16") == ("dtype", ["float16"])
    assert _param("sliding_window=False") == ("sliding_window", [False])
    assert _param("shape=(1, 2)") == ("shape", [(1, 2)])


def test_lint_builds_every_combination_for_every_target(cli):
    code, report, _ = cli("lint", "tvm.relax.frontend.nn.llm._decode_kernels:_merge_state_inplace",
                          "--target", "cuda,metal", "--param", "num_heads=8", "--param", "head_dim=128,256",
                          "--param", "v_dtype=float16", "--format", "json")
    builds = {(k["target"], k["params"]["head_dim"]) for k in report["kernels"]}
    assert builds == {("cuda", 128), ("cuda", 256), ("metal", 128), ("metal", 256)}


def test_define_of_an_unknown_parameter_is_an_error(cli):
    path = FIXTURES / "cuda" / "double_buffer.cu"
    code, out, err = cli("check", str(path), "--block-dim", "128", "--scalar", "stepz=8")
    assert code == 2
    assert "--scalar stepz: no kernel in this file has a scalar parameter 'stepz' (parameters: steps)" in err


def test_run_options_go_before_or_after_the_command(cli):
    code, out, _ = cli("-q", "check", str(RACY), "--block-dim", "128")
    assert code == 1 and out == "1 kernel(s): 0 clean, 1 with findings, 0 unknown; 1 error(s), 0 warning(s)\n"
    code, out, _ = cli("check", str(RACY), "--block-dim", "128", "--quiet", "--fail-on", "warning")
    assert code == 1 and out.count("\n") == 1
    code, out, err = cli("check", str(RACY), "--block-dim", "128", "-q", "-v")
    assert code == 2 and err == "kernelrace: error: --quiet and --verbose cannot be used together\n"


def test_check_format_sarif(cli):
    import json

    code, out, err = cli("check", str(RACY), "--block-dim", "128", "--format", "sarif")
    assert code == 1, err
    log = json.loads(out)
    assert log["version"] == "2.1.0"
    assert [r["ruleId"] for r in log["runs"][0]["results"]] == ["read-after-write"]
    assert log["runs"][0]["invocations"][0]["exitCode"] == 1
