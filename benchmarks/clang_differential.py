"""The clang front end against the Lark one on every hand-written fixture (tests/fixtures/{cuda,metal,
opencl}, tests/handwritten/): the same findings (rule and location of both accesses) or not, and why.

    python benchmarks/clang_differential.py [FILES...]   # prints one line per file, then the counts
"""

from __future__ import annotations

import io
import json
import shlex
import sys
import time
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from analyzer.cli import main  # noqa: E402
SUFFIXES = (".cu", ".cuh", ".metal", ".cl")


def hand_written_files() -> list[Path]:
    dirs = [ROOT / "tests/fixtures/cuda", ROOT / "tests/fixtures/metal", ROOT / "tests/fixtures/opencl",
            ROOT / "tests/handwritten"]
    return sorted(p for d in dirs for p in d.rglob("*") if p.suffix in SUFFIXES and "include" not in p.parts)


def fixture_args(path: Path) -> list[str]:
    first = path.read_text().splitlines()[0]
    marker = "kernelrace-args:"
    return shlex.split(first.split(marker, 1)[1]) if marker in first else []


def run(path: Path, frontend: str) -> tuple[int, object, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(["check", str(path), *fixture_args(path), "--timeout", "5", "--format", "json", "--no-cache",
                     "--frontend", frontend])
    if code not in (0, 1):
        return code, None, err.getvalue().strip()
    report = json.loads(out.getvalue())
    findings = sorted({(f["rule"], f["second"]["line"], f["second"]["col"],
                        (f.get("first") or {}).get("line")) for f in report["findings"]})
    unknown = sorted(k.get("kernel", "") for k in report.get("kernels", []) if k.get("status") == "unknown")
    replay = [f["message"] for f in report["findings"] if f["witness"] and not f["witness"].get("replayed", True)]
    return code, (findings, unknown, replay), ""


def _lines(result) -> tuple:
    findings, unknown, replay = result
    return sorted((rule, line, first) for rule, line, _col, first in findings), unknown, replay


def compare(path: Path) -> tuple[bool, str]:
    a = run(path, "lark")
    b = run(path, "clang")
    if a[0] == 2 and b[0] != 2:
        return True, f"lark exit 2 ({a[2][:120]}), clang reads it: {b[1][0] if b[1] else ''}"
    if a[:2] == b[:2]:
        return True, "same"
    if a[0] == b[0] and a[1] and b[1] and _lines(a[1]) == _lines(b[1]):
        # Lark's columns inside a line where a macro expanded are the expansion's (pcpp's output)
        return True, f"same lines; columns lark {a[1][0]} / clang {b[1][0]}"
    if b[0] == 2:
        return False, f"clang exit 2: {b[2][:200]}"
    return False, f"lark {a[1]} / clang {b[1]}"


if __name__ == "__main__":
    files = [Path(a) for a in sys.argv[1:]] or hand_written_files()
    same = 0
    t0 = time.time()
    for p in files:
        ok, why = compare(p)
        same += ok
        print(f"{'OK ' if ok else 'DIFF'} {p.relative_to(ROOT) if p.is_absolute() else p}: {why}", flush=True)
    print(f"{same}/{len(files)} agree ({time.time() - t0:.0f} s)")
