"""Baselines: --write-baseline records today's findings, --baseline reports only new ones."""

import json

import pytest
from conftest import FIXTURES

from analyzer.errors import KernelraceError
from analyzer.findings import Finding, KernelResult, Location
from analyzer.report import baseline
from analyzer.report import sarif

RACY = FIXTURES / "cuda" / "neighbour_shift.cu"


def _finding(line=8, text="x = sh[(t + 1) % 128];", rule="read-after-write", kernel="k", message="m"):
    first = Location("a.cu", line - 1, 5, "write", "sh", "shared", "sh[t] = in[t];")
    second = Location("a.cu", line, 9, "read", "sh", "shared", text)
    return Finding(rule, "error", message, kernel, "a.cu", second, first)


def test_key_is_the_sarif_fingerprint_and_ignores_lines_and_messages():
    f = _finding()
    assert baseline.key(f) == sarif.fingerprint(f)
    assert baseline.key(_finding(line=80, message="other thread numbers")) == baseline.key(f)
    assert baseline.key(_finding(text="x = sh[(t + 2) % 128];")) != baseline.key(f)
    assert baseline.key(_finding(kernel="k2")) != baseline.key(f)
    assert baseline.key(_finding(rule="write-after-read")) != baseline.key(f)


def test_one_entry_per_fingerprint_sorted(tmp_path):
    a, b = _finding(), _finding(text="y = sh[0];")
    results = [KernelResult("k", "a.cu", "cuda", {"n": 1}, [a, b]),
               KernelResult("k", "a.cu", "cuda", {"n": 2}, [_finding(line=9)])]   # the same race again
    path = tmp_path / "b.json"
    assert baseline.write(str(path), results) == 2
    data = json.loads(path.read_text())
    assert data["kernelrace-baseline"] == 1
    assert list(data["findings"]) == sorted([baseline.key(a), baseline.key(b)])
    assert data["findings"][baseline.key(a)] == {"rule": "read-after-write", "kernel": "k", "buffer": "sh", "message": "m"}
    assert baseline.load(str(path)) == {baseline.key(a), baseline.key(b)}
    # the same findings give the same bytes
    assert baseline.dumps(results)[0] == path.read_text()


@pytest.mark.parametrize("content, message", [
    (None, "no such baseline file (write one with --write-baseline"),
    ("{", "not a kernelrace baseline: invalid JSON at line 1 column 2"),
    ("[]", "not a kernelrace baseline: expected an object with \"kernelrace-baseline\" and \"findings\""),
    ('{"findings": {}}', "not a kernelrace baseline"),
    ('{"kernelrace-baseline": 7, "findings": {}}', "baseline format 7 is not one this kernelrace reads (1)"),
])
def test_missing_or_corrupt_baseline_is_one_line(tmp_path, content, message):
    path = tmp_path / "b.json"
    if content is not None:
        path.write_text(content)
    with pytest.raises(KernelraceError) as exc:
        baseline.load(str(path))
    assert str(exc.value).startswith(f"{path}: ") and message in str(exc.value)
    assert "\n" not in str(exc.value)


def test_cli_baseline_round_trip_survives_moved_lines(cli, tmp_path):
    src = tmp_path / "shift.cu"
    src.write_text(RACY.read_text())
    base = tmp_path / "b.json"
    code, out, err = cli("check", str(src), "--block-dim", "128", "--write-baseline", str(base))
    assert code == 0 and "read-after-write" in out       # the report is still printed
    assert err == f"kernelrace: wrote 1 finding(s) to the baseline {base}\n"

    # The race moves down three lines: still the baselined finding.
    src.write_text("// a\n// b\n// c\n" + RACY.read_text())
    code, report, err = cli("check", str(src), "--block-dim", "128", "--baseline", str(base), "--format", "json")
    assert code == 0, err
    assert report["findings"] == [] and report["summary"]["in_baseline"] == 1

    # A new race (the reader's statement changes): reported, and the exit status fails again.
    src.write_text(RACY.read_text().replace("(tid + 1) % 128", "(tid + 3) % 128"))
    code, report, _ = cli("check", str(src), "--block-dim", "128", "--baseline", str(base), "--format", "json")
    assert code == 1 and len(report["findings"]) == 1 and report["summary"]["in_baseline"] == 0


def test_cli_missing_or_corrupt_baseline_exit_2_before_any_work(cli, tmp_path):
    code, out, err = cli("check", str(tmp_path / "none.cu"), "--baseline", str(tmp_path / "nope.json"))
    assert code == 2 and out == ""
    assert err == (f"kernelrace: error: {tmp_path / 'nope.json'}: no such baseline file "
                   f"(write one with --write-baseline {tmp_path / 'nope.json'})\n")
    bad = tmp_path / "bad.json"
    bad.write_text("not json")
    code, _, err = cli("check", str(RACY), "--baseline", str(bad))
    assert code == 2 and len(err.splitlines()) == 1 and "not a kernelrace baseline" in err


def test_cli_baseline_option_errors(cli, tmp_path):
    code, _, err = cli("check", str(RACY), "--baseline", "a.json", "--write-baseline", "b.json")
    assert code == 2 and "--baseline and --write-baseline cannot be used together" in err
    code, _, err = cli("check", str(RACY), "--write-baseline", str(tmp_path / "no" / "dir" / "b.json"))
    assert code == 2 and "cannot write the baseline: no directory" in err
