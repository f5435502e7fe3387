"""The ruff-style interface: --version, no abbreviated options, --ignore/--extend-ignore (also in
the configuration), --exit-zero, --statistics, --format concise/github, `kernelrace: ignore`
comments in every dialect (--warn-unused-ignores), `check -` and the --scalar/--define rename."""

import io
import json
import os
import re
import shutil
import sys

import pytest

from conftest import FIXTURES

RACY = FIXTURES.parent / "data" / "neighbour_shift_symbolic.cu"   # write-after-write (line 8), read-after-write (7 -> 8)
# One fixture per dialect, each with a finding, and its comment marker.
DIALECTS = [("cuda/neighbour_shift.cu", "//"), ("metal/neighbour_shift.metal", "//"),
            ("opencl/reduce_tree.cl", "//"), ("vulkan/reduce_tree.comp", "//"),
            ("vulkan/tvm_shaped_tile.spvasm", ";"), ("wgsl/reduce_tree.wgsl", "//")]


def _findings(cli, *args):
    code, report, err = cli("check", "--no-cache", "-j", "1", "--format", "json", *map(str, args))
    assert code in (0, 1), err
    return report


def _user_line(f) -> tuple[str, int]:
    loc = f["second"]
    return (loc["origin"]["file"], loc["origin"]["line"]) if loc["origin"] else (loc["file"], loc["line"])


def _user_lines(f) -> set[int]:
    return {(loc["origin"] or loc)["line"] for loc in (f["first"], f["second"]) if loc}


def test_version(capsys):
    from analyzer import __version__
    from analyzer.cli import main

    with pytest.raises(SystemExit) as exc:
        main(["--version"])
    assert exc.value.code == 0 and capsys.readouterr().out == f"kernelrace {__version__}\n"


@pytest.mark.parametrize("args", [["check", str(RACY), "--form", "json"], ["--form", "json", "check", str(RACY)],
                                  ["check", str(RACY), "--block", "128"], ["lint", "m:f", "--tar", "cuda"]])
def test_abbreviated_options_are_errors(capsys, args):
    from analyzer.cli import main

    with pytest.raises(SystemExit) as exc:
        main(args)
    err = capsys.readouterr().err
    assert exc.value.code == 2 and err.startswith("kernelrace: error: ") and len(err.strip().splitlines()) == 1
    assert "unrecognized arguments" in err or "invalid choice: 'json'" in err


def test_ignore_and_extend_ignore(cli, tmp_path):
    rules = {f["rule"] for f in _findings(cli, RACY)["findings"]}
    assert rules == {"write-after-write", "read-after-write"}
    report = _findings(cli, RACY, "--ignore", "write-after-write")
    assert {f["rule"] for f in report["findings"]} == {"read-after-write"}
    report = _findings(cli, RACY, "--select", "write-after-write,read-after-write", "--extend-ignore",
                       "read-after-write")
    assert {f["rule"] for f in report["findings"]} == {"write-after-write"}
    code, out, err = cli("check", str(RACY), "--ignore", "write-after-wrte")
    assert code == 2 and "--ignore: unknown rule 'write-after-wrte'" in err
    code, out, err = cli("check", str(RACY), "--select", "read-after-write", "--ignore", "read-after-write")
    assert code == 2 and "every rule is ignored" in err


def test_ignore_in_the_configuration(cli, tmp_path, monkeypatch):
    shutil.copy(RACY, tmp_path / "k.cu")
    (tmp_path / "kernelrace.toml").write_text('ignore = ["write-after-write"]\nextend-ignore = ["barrier-scope"]\n')
    monkeypatch.chdir(tmp_path)
    assert {f["rule"] for f in _findings(cli, "k.cu")["findings"]} == {"read-after-write"}
    # --ignore replaces the configuration's ignore; its extend-ignore still applies
    report = _findings(cli, "k.cu", "--ignore", "read-after-write")
    assert {f["rule"] for f in report["findings"]} == {"write-after-write"}
    (tmp_path / "kernelrace.toml").write_text('extend-ignore = ["read-after-write"]\n')
    report = _findings(cli, "k.cu", "--extend-ignore", "write-after-write")
    assert report["findings"] == []
    (tmp_path / "kernelrace.toml").write_text('ignore = ["unknown"]\n')   # undecided pairs are always reported
    code, out, err = cli("check", "k.cu")
    assert code == 2 and "ignore: unknown rule 'unknown'" in err


def test_exit_zero(cli, tmp_path):
    assert cli("check", str(RACY), "--no-cache")[0] == 1
    assert cli("check", str(RACY), "--no-cache", "--exit-zero")[0] == 0
    assert cli("check", str(tmp_path / "missing.cu"), "--exit-zero")[0] == 2   # bad input is still 2


def test_statistics(cli):
    files = [FIXTURES / "cuda" / "neighbour_shift.cu", FIXTURES / "metal" / "neighbour_shift.metal",
             FIXTURES / "opencl" / "reduce_tree.cl"]
    code, out, err = cli("check", "--no-cache", "-j", "1", "--statistics", *map(str, files))
    assert code == 1
    rows = [line.split("\t") for line in out.splitlines()]
    # Each file checked under its kernelrace-args launch: a block of 128 threads, read-after-write only.
    assert [(int(n), rule.strip(), sev) for n, rule, sev in rows] == [(3, "read-after-write", "error")]
    code, stats, _ = cli("check", "--no-cache", "-j", "1", "--statistics", "--format", "json", *map(str, files))
    assert stats == [{"rule": "read-after-write", "severity": "error", "count": 3}]
    code, out, _ = cli("check", "--no-cache", "-j", "1", "--statistics", str(RACY))
    assert [(int(n), rule.strip()) for n, rule, _ in (line.split("\t") for line in out.splitlines())] == [
        (1, "read-after-write"), (1, "write-after-write")]
    code, out, err = cli("check", str(RACY), "--statistics", "--format", "sarif")
    assert code == 2 and "--statistics" in err


def test_concise_is_one_line_per_finding(cli):
    code, out, err = cli("check", str(RACY), "--no-cache", "--format", "concise")
    lines = out.splitlines()
    assert code == 1 and len(lines) == 3
    assert lines[0] == (f"{RACY}:8:5: error[write-after-write] write to out[128] (global) by thread (128,0,0) of "
                        f"block (0,0,0) races with the write by thread (0,0,0) of block (1,0,0) at line 8; races "
                        f"when blockDim.x >= 129 and gridDim.x >= 2 (kernel neighbour_shift)")
    assert lines[1].startswith(f"{RACY}:8:23: error[read-after-write] read of sh[")
    assert lines[2] == "1 kernel(s), 0 unknown: 2 error(s), 0 warning(s), 0 note(s)"


def test_github_annotations_on_the_users_lines(cli):
    comp = FIXTURES / "vulkan" / "reduce_tree.comp"
    code, out, err = cli("check", str(RACY), str(comp), "--no-cache", "-j", "1", "--format", "github")
    lines = out.splitlines()
    assert code == 1 and len(lines) == 4, out
    # paths relative to the working directory (the repository's root in a workflow), as the runner wants
    assert lines[0].startswith(f"::error file={os.path.relpath(RACY)},line=8,col=5,title=kernelrace (write-after-write)::write to "
                               f"out[128]")
    assert "%0Afix: " in lines[0] and "\n" not in lines[0]
    # GLSL: the shader's own line, not the disassembly's
    assert lines[2].startswith(f"::error file={os.path.relpath(comp)},line=15,title=kernelrace (read-after-write)::")
    assert lines[3].startswith(f"::notice file={os.path.relpath(comp)},line=18,title=kernelrace (redundant-barrier)::")


def test_github_escapes_properties_and_data():
    from analyzer.report.github import _data, _prop

    assert _prop("a:b,c%d") == "a%3Ab%2Cc%25d"
    assert _data("50%\r\nnext: a,b") == "50%25%0D%0Anext: a,b"


def _with_comment(src, dst, line: int, comment: str, above: bool) -> None:
    lines = src.read_text().splitlines()
    if above:
        indent = re.match(r"\s*", lines[line - 1]).group(0)
        lines.insert(line - 1, indent + comment)
    else:
        lines[line - 1] += "  " + comment
    dst.write_text("\n".join(lines) + "\n")


@pytest.mark.parametrize("above", [False, True], ids=["same-line", "line-above"])
@pytest.mark.parametrize("name,marker", DIALECTS, ids=[d[0].split("/")[0] + d[0][d[0].rfind("."):] for d in DIALECTS])
def test_inline_suppression_in_every_dialect(cli, tmp_path, monkeypatch, name, marker, above):
    monkeypatch.chdir(tmp_path)
    src = FIXTURES / name
    local = tmp_path / src.name
    shutil.copy(src, local)
    before = _findings(cli, local.name)["findings"]
    target = next(f for f in before if f["severity"] == "error")
    file, line = _user_line(target)
    assert file == local.name        # the user's file (for GLSL, the .comp, not its disassembly)
    _with_comment(src, local, line, f"{marker} kernelrace: ignore[{target['rule']}]", above)
    after = _findings(cli, local.name)
    silenced = [f for f in before if f["rule"] == target["rule"] and line in _user_lines(f)]
    assert after["summary"]["suppressed"] == len(silenced) >= 1
    assert len(after["findings"]) == len(before) - len(silenced)
    assert all(not (f["rule"] == target["rule"] and line + above in _user_lines(f)) for f in after["findings"])


def test_a_directive_covers_only_its_rules_and_lines(cli, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    # line 8 holds both findings: the write-after-write (8 with 8) and the read-after-write (7 -> 8)
    _with_comment(RACY, tmp_path / "k.cu", 8, "// kernelrace: ignore[divergent-barrier]", above=False)
    report = _findings(cli, "k.cu")
    assert len(report["findings"]) == 2 and report["summary"]["suppressed"] == 0
    # the line of the first access (7) silences the read-after-write, not the write-after-write
    _with_comment(RACY, tmp_path / "k.cu", 7, "// kernelrace: ignore[read-after-write, write-after-write]",
                  above=False)
    report = _findings(cli, "k.cu")
    assert [f["rule"] for f in report["findings"]] == ["write-after-write"]
    # bare: every rule on the line
    _with_comment(RACY, tmp_path / "k.cu", 8, "// kernelrace: ignore", above=True)
    report = _findings(cli, "k.cu")
    assert report["findings"] == [] and report["summary"]["suppressed"] == 2
    # a trailing directive on the line above is that line's, not the next one's
    _with_comment(RACY, tmp_path / "k.cu", 6, "// kernelrace: ignore", above=False)
    assert len(_findings(cli, "k.cu")["findings"]) == 2


def test_warn_unused_ignores(cli, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    _with_comment(RACY, tmp_path / "k.cu", 8, "// kernelrace: ignore[read-after-write, divergent-barrier, nope]",
                  above=False)
    shutil.copy(FIXTURES / "cuda" / "neighbour_shift_fixed.cu", tmp_path / "clean.cu")
    with open(tmp_path / "clean.cu", "a") as fh:
        fh.write("// kernelrace: ignore\n")
    col = (tmp_path / "k.cu").read_text().splitlines()[7].index("kernelrace: ignore") + 1
    code, out, err = cli("check", "k.cu", "clean.cu", "--block-dim", "128", "--no-cache", "-j", "1",
                         "--warn-unused-ignores", "-q")
    assert code == 0      # the race is silenced, and unused comments are warnings (fail-on: error)
    assert err.splitlines() == [
        f"clean.cu:{len((tmp_path / 'clean.cu').read_text().splitlines())}:4: warning: unused suppression "
        f"`kernelrace: ignore`: silenced nothing",
        f"k.cu:8:{col}: warning: unused suppression `kernelrace: ignore[read-after-write, divergent-barrier, nope]`: "
        "silenced no divergent-barrier finding",
        f"k.cu:8:{col}: warning: unused suppression `kernelrace: ignore[read-after-write, divergent-barrier, nope]`: "
        "unknown rule 'nope'"]
    # they count as warnings for --fail-on
    code, _, _ = cli("check", "clean.cu", "--block-dim", "128", "--no-cache", "--warn-unused-ignores", "-q",
                     "--fail-on", "warning")
    assert code == 1
    code, _, err = cli("check", "clean.cu", "--block-dim", "128", "--no-cache", "-q", "--fail-on", "warning")
    assert code == 0 and err == ""


def _stdin(monkeypatch, data: bytes) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))


@pytest.mark.parametrize("name", [d[0] for d in DIALECTS])
def test_check_stdin_takes_the_dialect_from_the_name(cli, monkeypatch, name):
    src = FIXTURES / name
    from_file = _findings(cli, src)
    monkeypatch.chdir(FIXTURES)
    _stdin(monkeypatch, src.read_bytes())
    code, report, err = cli("check", "-", "--stdin-filename", name, "--format", "json")
    assert code == 1, err
    for f in report["findings"] + from_file["findings"]:
        f.pop("fix")   # a hint names the file as given
    assert json.dumps(report["findings"]).replace(name, "X") == json.dumps(from_file["findings"]).replace(str(src), "X")


def test_check_stdin_reads_suppressions_from_stdin(cli, monkeypatch):
    text = RACY.read_text().splitlines()
    text[7] += "  // kernelrace: ignore"
    _stdin(monkeypatch, ("\n".join(text) + "\n").encode())
    code, report, err = cli("check", "-", "--stdin-filename", "k.cu", "--format", "json")
    assert code == 0 and report["summary"]["suppressed"] == 2


def test_check_stdin_needs_a_dialect(cli, monkeypatch):
    _stdin(monkeypatch, b"")
    code, out, err = cli("check", "-")
    assert code == 2 and "--stdin-filename" in err
    code, out, err = cli("check", str(RACY), "--stdin-filename", "x.cu")
    assert code == 2 and "with `check -`" in err


def test_scalar_and_the_deprecated_define(cli, tmp_path):
    k = tmp_path / "k.cu"
    k.write_text("__global__ void k(float* a, int n) {\n  __shared__ float s[64];\n"
                 "  s[threadIdx.x] = a[threadIdx.x];\n  a[threadIdx.x] = s[(threadIdx.x + n) % 64];\n}\n")
    code, new, err = cli("check", str(k), "--block-dim", "64", "--scalar", "n=0", "--no-cache", "--format", "json")
    assert code == 0 and err == ""
    code, old, err = cli("check", str(k), "--block-dim", "64", "--define", "n=0", "--no-cache", "--format", "json")
    assert code == 0 and old["findings"] == new["findings"]
    assert err.strip() == ("kernelrace: warning: --define is deprecated, use --scalar NAME=INT (a scalar kernel "
                           "parameter; -D defines a preprocessor macro)")
    code, racy, err = cli("check", str(k), "--block-dim", "64", "--scalar", "n=1", "--no-cache", "--format", "json")
    assert code == 1


def test_configuration_define_is_scalars_deprecated_name(cli, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    shutil.copy(RACY, tmp_path / "k.cu")
    (tmp_path / "kernelrace.toml").write_text("[check]\ndefine = {}\n")
    code, out, err = cli("check", "k.cu", "-q", "--no-cache")
    assert code == 1 and "kernelrace: warning: kernelrace.toml: [check] define is deprecated: call it scalar" in err
    (tmp_path / "kernelrace.toml").write_text("[check]\nscalar = {}\n")
    code, out, err = cli("check", "k.cu", "-q", "--no-cache")
    assert code == 1 and "warning" not in err


def _finding(file, line, origin=None, rule="write-after-write"):
    from analyzer.findings import Finding, Location

    loc = Location(file, line, 3, "write", "B", "global", origin=origin)
    return Finding(rule, "error", "m", "k", file, second=loc, first=loc)


def test_a_builds_emitted_source_is_not_read_but_a_builders_python_line_is(tmp_path, monkeypatch):
    """TVM's emitted source is named like a file (`tiles.cu`) but is not the user's: a file of that
    name in the working directory is not read for a build's finding. A finding that maps back to a
    builder's Python line is silenced by a `#` comment there."""
    from analyzer.command.suppressions import Inline

    monkeypatch.chdir(tmp_path)
    (tmp_path / "tiles.cu").write_text("x\ny  // kernelrace: ignore\n")
    (tmp_path / "builder.py").write_text("def f():\n    # kernelrace: ignore[write-after-write]\n    B[i] = A[i]\n")
    inline = Inline()
    assert not inline.suppresses(_finding("tiles.cu", 2), built=True)
    assert inline.suppresses(_finding("tiles.cu", 2), built=False)     # `check tiles.cu`: the user's file
    assert inline.suppresses(_finding("tiles.cu", 9, origin=("builder.py", 3, 0)), built=True)
    assert not inline.suppresses(_finding("tiles.cu", 9, origin=("builder.py", 3, 0), rule="read-after-write"),
                                 built=True)
    # `//` is not a comment in Python, nor `#` in CUDA
    (tmp_path / "b2.py").write_text("x = 1  // kernelrace: ignore\n")
    (tmp_path / "k.cu").write_text("x = 1;  # kernelrace: ignore\n")
    assert not inline.suppresses(_finding("t.cu", 9, origin=("b2.py", 1, 0)), built=True)
    assert not inline.suppresses(_finding("k.cu", 1), built=False)


def test_a_builders_findings_land_on_its_python_line(cli, tmp_path, monkeypatch):
    """`lint` of a TVMScript builder: the annotation (and the concise line) is the builder's own
    Python line of the racing store, and `# kernelrace: ignore[...]` there silences it."""
    src = FIXTURES.parent / "builders" / "grid_races.py"
    (tmp_path / "my_tiles.py").write_text(src.read_text())
    monkeypatch.chdir(tmp_path)
    store = next(n for n, line in enumerate(src.read_text().splitlines(), 1)
                 if line.strip().startswith("B[bx * step + tx] ="))
    args = ("lint", "my_tiles:tiles", "--param", "overlap=4", "--target", "cuda,vulkan", "--no-cache", "-j", "1")
    code, out, err = cli(*args, "--format", "github")
    assert code == 1, err
    lines = out.splitlines()
    assert len(lines) == 2 and all(line.startswith(f"::error file=my_tiles.py,line={store},col=21,title=kernelrace "
                                                   f"(write-after-write)::") for line in lines), out
    code, out, err = cli(*args, "--format", "concise")
    assert out.splitlines()[0].startswith(f"my_tiles.py:{store}:21: error[write-after-write] ")
    _with_comment(src, tmp_path / "my_tiles.py", store, "# kernelrace: ignore[write-after-write]", above=True)
    code, report, err = cli(*args, "--format", "json")
    assert code == 0 and report["findings"] == [] and report["summary"]["suppressed"] == 2, err
