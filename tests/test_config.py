"""Project configuration ([tool.kernelrace] / kernelrace.toml) and the bare `kernelrace` CI gate,
run in-process in the sample repository tests/sample_repo (or a copy of it)."""

import json
import re
import shutil
import sys
from pathlib import Path

import pytest
from conftest import FIXTURES, TESTS

from analyzer.command import config

SAMPLE = TESTS / "sample_repo"
RACY, CLEAN = "sample_kernels:shift_inplace", "sample_kernels:shift_out_of_place"
ANSI = re.compile(r"\x1b\[")


@pytest.fixture(autouse=True)
def _restore_sys_path(monkeypatch):
    # The CLI puts the configuration's directory (and load_builder the working directory) on
    # sys.path, as for a user's run; undo it after each test.
    monkeypatch.setattr(sys, "path", list(sys.path))


@pytest.fixture
def sample(monkeypatch):
    monkeypatch.chdir(SAMPLE)
    return SAMPLE


@pytest.fixture
def repo(tmp_path, monkeypatch):
    """A copy of the sample repository (a repository root: it has .git), to edit its configuration."""
    root = tmp_path / "repo"
    shutil.copytree(SAMPLE, root, ignore=shutil.ignore_patterns("__pycache__"))
    (root / ".git").mkdir()
    monkeypatch.chdir(root)
    return root


def _add(repo: Path, text: str, file: str = "pyproject.toml") -> None:
    path = repo / file
    old = path.read_text() if path.exists() else ""
    path.write_text(old + "\n" + text)


def _replace(repo: Path, old: str, new: str) -> None:
    path = repo / "pyproject.toml"
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new))


# --- the CI gate in the sample repository ---------------------------------------------------------

def test_bare_kernelrace_lints_every_configured_builder_and_fails_on_the_race(sample, cli):
    code, report, err = cli("--format", "json")
    assert code == 1, err
    builds = {(k["kernel"], k["target"], k["params"]["n"], k["status"]) for k in report["kernels"]}
    assert builds == {("shift_kernel", "cuda", 64, "findings"), ("shift_kernel", "metal", 64, "findings"),
                      ("shift_out_kernel", "cuda", 64, "clean"), ("shift_out_kernel", "metal", 64, "clean"),
                      ("shift_out_kernel", "cuda", 128, "clean"), ("shift_out_kernel", "metal", 128, "clean")}
    found = sorted((f["rule"], f["severity"], f["kernel"], f["target"], f["second"]["buffer"])
                   for f in report["findings"])
    assert found == [("write-after-read", "error", "shift_kernel", "cuda", "A"),
                     ("write-after-read", "error", "shift_kernel", "metal", "A")]


def test_bare_kernelrace_text_report(sample, cli):
    code, out, err = cli()
    assert code == 1 and err == ""
    assert "error[write-after-read]" in out and "kernel shift_kernel [cuda, n=64, dtype='float32']" in out
    assert out.splitlines()[-1] == "6 kernel(s): 4 clean, 2 with findings, 0 unknown; 2 error(s), 0 warning(s)"


def test_write_baseline_then_baseline_passes_and_reports_nothing_new(sample, cli, tmp_path):
    base = tmp_path / "kernelrace-baseline.json"
    code, out, err = cli("--write-baseline", str(base))
    assert code == 0
    assert f"kernelrace: wrote 2 finding(s) to the baseline {base}" in err
    entries = json.loads(base.read_text())["findings"]
    assert sorted((e["rule"], e["kernel"], e["buffer"]) for e in entries.values()) == \
        [("write-after-read", "shift_kernel", "A")] * 2
    assert all(e["message"].startswith("write to A[") for e in entries.values())

    code, report, err = cli("--baseline", str(base), "--format", "json")
    assert code == 0, err
    assert report["findings"] == []
    assert report["summary"]["in_baseline"] == 2 and report["summary"]["errors"] == 0
    code, out, _ = cli("--baseline", str(base))
    assert code == 0
    assert out.strip() == "6 kernel(s): 6 clean, 0 with findings, 0 unknown; 0 error(s), 0 warning(s); 2 in baseline"


def test_a_new_race_is_reported_over_a_baseline(repo, cli, tmp_path):
    base = tmp_path / "b.json"
    assert cli("--write-baseline", str(base))[0] == 0
    # A second racy builder appears: the baseline does not cover it.
    (repo / "sample_kernels.py").write_text((repo / "sample_kernels.py").read_text() + '''

def shift_back(n, dtype):
    @T.prim_func(s_tir=True)
    def shift_back(a: T.handle):
        T.func_attr({"tirx.is_scheduled": True})
        A = T.match_buffer(a, (n + 1,), dtype)
        for tx in T.thread_binding(n, thread="threadIdx.x"):
            with T.sblock("shift"):
                A[tx + 1] = A[tx] + T.cast(1, dtype)

    return shift_back
''')
    sys.modules.pop("sample_kernels", None)
    try:
        _add(repo, '[[tool.kernelrace.lint]]\nbuilder = "sample_kernels:shift_back"\ntargets = ["cuda"]\n'
                   'params = { n = 64, dtype = "float32" }\n')
        code, report, err = cli("--baseline", str(base), "--format", "json")
    finally:
        sys.modules.pop("sample_kernels", None)
    assert code == 1, err
    assert {f["kernel"] for f in report["findings"]} == {"shift_back_kernel"}
    assert report["summary"]["in_baseline"] == 2


def test_quiet_prints_only_the_summary_and_twice_nothing(sample, cli):
    code, out, err = cli("-q")
    assert code == 1
    assert out == "6 kernel(s): 4 clean, 2 with findings, 0 unknown; 2 error(s), 0 warning(s)\n"
    code, out, err = cli("-qq")
    assert (code, out, err) == (1, "", "")


def test_verbose_prints_timing_and_solver_queries(sample, cli):
    code, out, err = cli("--verbose", "--select", "write-after-read")
    assert code == 1
    lines = [line for line in out.splitlines() if line.startswith("kernel ")]
    assert len(lines) == 6
    assert re.fullmatch(r"kernel shift_kernel \[cuda, n=64, dtype='float32'\] \(shift_inplace\.cu\): findings, "
                        r"1 finding\(s\), \d+\.\d{3} s, \d+ solver quer(y|ies)", lines[0])
    assert re.search(r"^analysis: \d+\.\d{3} s, \d+ solver queries; peak resident memory \d+ MB$", out, re.M)
    assert len(re.findall(r"^built sample_kernels:\w+ for (cuda|metal) \(.*\) in \d+\.\d\d s", err, re.M)) == 6
    code, report, _ = cli("--verbose", "--format", "json")
    # A kernel whose pairs the solver-free disjointness proof settles asks the solver nothing.
    assert all(isinstance(k["seconds"], float) and isinstance(k["queries"], int) for k in report["kernels"])
    assert sum(k["queries"] for k in report["kernels"]) >= 1


def test_output_file_gets_the_report_without_colour(sample, cli, tmp_path, monkeypatch):
    monkeypatch.setenv("FORCE_COLOR", "1")      # as if stdout were a terminal
    code, out, err = cli("--quiet")
    assert ANSI.search(out)                      # colour on the "terminal"...
    path = tmp_path / "report.txt"
    code, out, err = cli("--output", str(path))
    assert code == 1 and out == ""
    text = path.read_text()
    assert "error[write-after-read]" in text and not ANSI.search(text)   # ...none in a file
    code, out, _ = cli("--format=json", "-o", str(tmp_path / "r.json"))
    assert code == 1 and out == ""
    assert json.loads((tmp_path / "r.json").read_text())["summary"]["errors"] == 2


def test_sarif_output_carries_the_baseline_fingerprints(sample, cli, tmp_path):
    base = tmp_path / "b.json"
    cli("--write-baseline", str(base))
    code, out, err = cli("--format", "sarif", "--emit-dir", str(tmp_path / "emitted"))
    assert code == 1, err
    log = json.loads(out)
    assert log["version"] == "2.1.0"
    results = log["runs"][0]["results"]
    assert {r["partialFingerprints"]["kernelrace/v1"] for r in results} == set(json.loads(base.read_text())["findings"])
    # the alert on the builder's own Python line; the source TVM emitted (written) a related location
    primary = results[0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
    emitted = [r["physicalLocation"]["artifactLocation"]["uri"] for r in results[0]["relatedLocations"] if r["id"] == 2]
    assert primary.endswith("sample_kernels.py")
    assert "emitted" in emitted[0] and (tmp_path / "emitted" / "cuda-n=64-dtype=float32" / "shift_inplace.cu").is_file()


def test_command_line_overrides_the_configuration(repo, cli):
    _replace(repo, 'fail-on = "error"', 'fail-on = "error"\nselect = ["write-after-write"]')
    assert cli()[0] == 0                                       # the configuration's select
    assert cli("--select", "write-after-read")[0] == 1         # the command line's


def test_lint_subcommand_uses_the_configured_rules_and_severities(repo, cli):
    _replace(repo, 'fail-on = "error"', 'severity = { "write-after-read" = "warning" }')
    code, report, _ = cli("lint", RACY, "--target", "cuda", "--param", "n=32", "--param", "dtype=float32",
                          "--format", "json")
    assert code == 0 and [f["severity"] for f in report["findings"]] == ["warning"]


# --- severity and fail-on -------------------------------------------------------------------------

def test_severity_override_and_fail_on(repo, cli):
    _replace(repo, 'fail-on = "error"', 'severity = { "write-after-read" = "warning" }')
    code, report, _ = cli("--format", "json")
    assert code == 0                      # fail-on defaults to error: warnings pass
    assert {f["severity"] for f in report["findings"]} == {"warning"}
    assert report["summary"]["warnings"] == 2 and report["summary"]["errors"] == 0
    assert cli("--fail-on", "warning")[0] == 1
    _replace(repo, 'severity = {', 'fail-on = "warning"\nseverity = {')
    assert cli()[0] == 1
    assert cli("--fail-on", "error")[0] == 0
    _replace(repo, '"write-after-read" = "warning"', '"write-after-read" = "note"')
    assert cli()[0] == 0                  # a note is below warning


# --- suppressions ---------------------------------------------------------------------------------

def test_suppression_with_a_reason_hides_the_finding(repo, cli):
    _add(repo, '[[tool.kernelrace.suppress]]\nrule = "write-after-read"\nkernel = "shift_kernel"\nbuffer = "A"\n'
               'reason = "the test wants this race"\n')
    code, out, err = cli()
    assert code == 0, err
    assert out.strip() == "6 kernel(s): 6 clean, 0 with findings, 0 unknown; 0 error(s), 0 warning(s); 2 suppressed"
    code, report, _ = cli("--format", "json")
    assert report["summary"]["suppressed"] == 2


def test_suppression_must_match_every_field_it_names(repo, cli):
    _replace(repo, 'fail-on = "error"',
             'suppress = [{ rule = "write-after-read", buffer = "B", reason = "another buffer" }]')
    code, report, _ = cli("--format", "json")
    assert code == 1 and report["summary"]["suppressed"] == 0


def test_suppression_without_a_reason_is_an_error_naming_it(repo, cli):
    _add(repo, '[[tool.kernelrace.suppress]]\nrule = "write-after-read"\nkernel = "shift_kernel"\n')
    code, out, err = cli()
    assert code == 2 and out == ""
    assert err == ("kernelrace: error: pyproject.toml: [[tool.kernelrace.suppress]] entry 1 (rule = "
                   "'write-after-read', kernel = 'shift_kernel') has no reason: say why the finding is not a bug "
                   "(reason = \"...\")\n")


def test_suppression_with_an_empty_reason_is_an_error(repo, cli):
    _replace(repo, 'fail-on = "error"', 'suppress = [{ buffer = "A", reason = "  " }]')
    code, _, err = cli()
    assert code == 2 and "[tool.kernelrace.suppress]] entry 1 (buffer = 'A') has no reason" in err


# --- errors: one line, exit 2 ---------------------------------------------------------------------

def test_unknown_key_is_an_error_naming_it(repo, cli):
    _replace(repo, 'fail-on = "error"', 'selct = ["write-after-read"]')
    code, out, err = cli()
    assert code == 2 and out == ""
    assert err == ("kernelrace: error: pyproject.toml: [tool.kernelrace] unknown key 'selct' "
                   "(did you mean 'select'?)\n")


@pytest.mark.parametrize("edit, message", [
    (('builder = "sample_kernels:shift_inplace"', 'buildr = "sample_kernels:shift_inplace"'),
     "[[tool.kernelrace.lint]] entry 1 unknown key 'buildr' (did you mean 'builder'?)"),
    (('targets = ["cuda", "metal"]\nparams = { n = 64,', 'targets = ["cude"]\nparams = { n = 64,'),
     ("[[tool.kernelrace.lint]] entry 1 (sample_kernels:shift_inplace) targets: expected one of 'cuda', "
      "'metal', 'vulkan', 'webgpu', 'opencl', got 'cude'")),
    (('n = [64, 128]', 'n = []'),
     "[[tool.kernelrace.lint]] entry 2 (sample_kernels:shift_out_of_place) params.n: an empty list builds nothing"),
    (('builder = "sample_kernels:shift_inplace"', 'builder = "sample_kernels.shift_inplace"'),
     "[[tool.kernelrace.lint]] entry 1 builder: expected \"module:function\", got 'sample_kernels.shift_inplace'"),
    (('fail-on = "error"', 'fail-on = "errors"'),
     "[tool.kernelrace] fail-on: expected one of 'error', 'warning', 'note', got 'errors'"),
    (('fail-on = "error"', 'timeout = -1'),
     "[tool.kernelrace] timeout: expected a positive number of seconds, got -1"),
    (('fail-on = "error"', 'strict = "yes"'), "[tool.kernelrace] strict: expected true or false, got 'yes'"),
    (('fail-on = "error"', 'select = ["write-after-reed"]'),
     "[tool.kernelrace] select: unknown rule 'write-after-reed' (known: "),
    (('fail-on = "error"', 'severity = { "write-after-read" = "fatal" }'),
     "[tool.kernelrace] severity.write-after-read: expected one of 'error', 'warning', 'note', got 'fatal'"),
    (('fail-on = "error"', '[tool.kernelrace.check]\nblock-dim = [0]'),
     "[tool.kernelrace.check] block-dim: expected a positive integer or a list of 1 to 3 of them, got [0]"),
    (('fail-on = "error"', '[tool.kernelrace.check]\nlang = "hip"'),
     "[tool.kernelrace.check] lang: expected one of 'cuda', 'metal', 'spirv', 'wgsl', 'opencl', got 'hip'"),
    (('fail-on = "error"', 'suppress = "write-after-read"'),
     "[tool.kernelrace] suppress: expected an array of tables ([[tool.kernelrace.suppress]])"),
    (('fail-on = "error"', 'fail-on = '), "pyproject.toml: invalid TOML: "),
])
def test_bad_values_are_errors_naming_the_key(repo, cli, edit, message):
    _replace(repo, *edit)
    code, out, err = cli()
    assert code == 2 and out == "", err
    assert err.startswith("kernelrace: error: pyproject.toml: ") and message in err
    assert len(err.splitlines()) == 1 and "Traceback" not in err


def test_configuration_errors_apply_to_check_and_lint_but_not_rules(repo, cli):
    _replace(repo, 'fail-on = "error"', 'selct = []')
    assert cli("check", str(FIXTURES / "cuda" / "neighbour_shift.cu"))[0] == 2
    assert cli("rules")[0] == 0 and cli("explain", "write-after-read")[0] == 0
    # (Its launch as its first line gives it: with a symbolic block size its 128-wide tiles overlap
    # between blocks once blockDim.x > 128.)
    assert cli("--no-config", "check", str(FIXTURES / "cuda" / "neighbour_shift_fixed.cu"), "--block-dim", "128")[0] == 0


# --- finding the configuration --------------------------------------------------------------------

def test_no_configuration_prints_usage_and_exits_2(tmp_path, monkeypatch, cli):
    (tmp_path / ".git").mkdir()
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\n')   # not ours
    monkeypatch.chdir(tmp_path)
    code, out, err = cli()
    assert code == 2 and out == ""
    assert err.startswith("usage: kernelrace")
    assert err.splitlines()[-1].startswith("kernelrace: error: no command given and no configuration found")


def test_configuration_without_lint_entries_is_an_error(tmp_path, monkeypatch, cli):
    (tmp_path / ".git").mkdir()
    (tmp_path / "kernelrace.toml").write_text('fail-on = "warning"\n')
    monkeypatch.chdir(tmp_path)
    code, _, err = cli()
    assert code == 2 and err == "kernelrace: error: kernelrace.toml: no lint entries ([[tool.kernelrace.lint]]): nothing to lint\n"


def test_found_from_a_subdirectory_and_builders_imported_from_its_directory(repo, monkeypatch, cli):
    sub = repo / "src" / "deeper"
    sub.mkdir(parents=True)
    monkeypatch.chdir(sub)
    sys.modules.pop("sample_kernels", None)
    assert config.find() == repo / "pyproject.toml"
    assert cli("-q")[0] == 1


def test_search_stops_at_the_repository_root(tmp_path, monkeypatch):
    (tmp_path / "kernelrace.toml").write_text("")
    inner = tmp_path / "inner"
    (inner / ".git").mkdir(parents=True)
    monkeypatch.chdir(inner)
    assert config.find() is None
    (inner / ".git").rmdir()
    assert config.find() == tmp_path / "kernelrace.toml"


def test_kernelrace_toml_wins_over_pyproject(repo, cli):
    (repo / "kernelrace.toml").write_text(
        '[[lint]]\nbuilder = "sample_kernels:shift_out_of_place"\ntargets = ["cuda"]\n'
        'params = { n = 32, dtype = "float16" }\n')
    code, report, err = cli("--format", "json")
    assert code == 0, err
    assert [(k["kernel"], k["target"], k["params"]) for k in report["kernels"]] == \
        [("shift_out_kernel", "cuda", {"n": 32, "dtype": "float16"})]
    (repo / "kernelrace.toml").write_text('[lint]\nbuilder = "x:y"\n')
    code, _, err = cli()
    assert code == 2 and "kernelrace.toml: lint: expected an array of tables ([[lint]])" in err
    (repo / "kernelrace.toml").write_text('selct = 1\n')
    assert cli()[2] == "kernelrace: error: kernelrace.toml: unknown key 'selct' (did you mean 'select'?)\n"


def test_explicit_config_file(repo, cli, tmp_path):
    other = tmp_path / "ci.toml"
    other.write_text(f'[[lint]]\nbuilder = "{CLEAN}"\ntargets = ["metal"]\nparams = {{ n = 64, dtype = "float32" }}\n')
    code, report, _ = cli("--config", str(other), "--format", "json")
    assert code == 0 and [k["target"] for k in report["kernels"]] == ["metal"]
    code, _, err = cli("--config", str(tmp_path / "nope.toml"))
    assert code == 2 and "nope.toml: no such file" in err


def test_check_defaults_from_the_configuration(tmp_path, monkeypatch, cli):
    (tmp_path / ".git").mkdir()
    (tmp_path / "kernelrace.toml").write_text('[check]\nblock-dim = 128\nlang = "cuda"\n')
    src = tmp_path / "shift.kernel"       # no known extension: the language comes from the configuration
    src.write_text((FIXTURES / "cuda" / "neighbour_shift.cu").read_text())
    monkeypatch.chdir(tmp_path)
    code, report, err = cli("check", "shift.kernel", "--format", "json")
    assert code == 1, err
    w = report["findings"][0]["witness"]
    assert (w["second_thread"][0] + 1) % 128 == w["element"]      # the block has 128 threads
    # the command line overrides the configuration
    code, report, err = cli("check", "shift.kernel", "--block-dim", "64", "--format", "json")
    w = report["findings"][0]["witness"]
    assert (w["second_thread"][0] + 1) % 64 == w["element"] and max(w["first_thread"][0], w["second_thread"][0]) < 64


def test_params_scalar_is_one_value_and_list_is_a_grid(tmp_path):
    path = tmp_path / "kernelrace.toml"
    path.write_text('[[lint]]\nbuilder = "m:f"\nparams = { head_dim = [128, 256], dtype = "float16", '
                    'shape = [[1, 2]] }\n')
    (entry,) = config.load(path).lint
    assert entry.targets == ["cuda", "metal"]
    assert entry.params == {"head_dim": [128, 256], "dtype": ["float16"], "shape": [[1, 2]]}


def test_check_include_directories_from_the_configuration(tmp_path, monkeypatch, cli):
    (tmp_path / ".git").mkdir()
    (tmp_path / "kernelrace.toml").write_text('[check]\nblock-dim = 64\ninclude = ["headers"]\n')
    (tmp_path / "headers").mkdir()
    (tmp_path / "headers" / "tile.cuh").write_text("#define TILE 64\n")
    (tmp_path / "src").mkdir()
    src = tmp_path / "src" / "k.cu"
    src.write_text('#include "tile.cuh"\n__global__ void k(float *a) {\n'
                   '    __shared__ float s[TILE];\n    s[threadIdx.x] = 1;\n    a[threadIdx.x] = s[(threadIdx.x + 1) % TILE];\n}\n')
    monkeypatch.chdir(tmp_path / "src")   # the directory is the configuration file's, not the cwd's
    code, report, err = cli("check", "k.cu", "--format", "json")
    assert code == 1, err
    assert [(f["rule"], f["second"]["line"]) for f in report["findings"]] == [("read-after-write", 5)]
    code, _, err = cli("check", "k.cu", "--no-config", "--block-dim", "64")
    # Without the configuration's include folder the header is a note, and TILE a symbolic
    # parameter the note names (issue 41): the race is still found, under a condition on TILE.
    assert code == 1 and "tile.cuh not found" in err and "-D TILE=VALUE" in err
