"""`kernelrace llm` on the panel of public model configs (benchmarks/model_configs/), per target:
errors, warnings, unknowns, wall time and peak RSS of each run, and the kernels with warnings or
unknowns (what the built-in contracts of docs/contracts.md leave to explain).

Each model x target is one `kernelrace llm --model-config CONFIG --target T -j 1 --no-cache`
process (the CLI a user runs, the built-in contracts in force), timed from outside; peak RSS is
that process's (os.wait4), so runs do not share a cache or a Python heap.

    python benchmarks/model_panel.py [--models qwen2-7b,phi-2] [--targets cuda,metal,vulkan]
        [--no-contracts] [--json OUT.jsonl]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PANEL = ROOT / "benchmarks" / "model_configs"


def run(config: Path, target: str, extra: list[str]) -> dict:
    """One `kernelrace llm` process: its summary, time, peak RSS and the kernels left with findings."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "report.json"
        cmd = [sys.executable, "-m", "analyzer.cli", "llm", "--model-config", str(config), "--target", target,
               "-j", "1", "--no-cache", "--format", "json", "-o", str(out), *extra]
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        _, status, usage = os.wait4(proc.pid, 0)
        seconds = time.perf_counter() - t0
        stderr = proc.stderr.read()
        proc.stderr.close()
        row = {"model": config.stem, "target": target, "seconds": round(seconds, 1),
               "peak_rss_mb": round(usage.ru_maxrss / 1024), "exit": os.waitstatus_to_exitcode(status)}
        if not out.exists():
            return row | {"failed": stderr.strip().splitlines()[-1:] or ["no report"]}
        report = json.loads(out.read_text())
    s = report["summary"]
    left = Counter(f"{f['kernel']}:{f['second']['buffer']}" for f in report["findings"] if f["severity"] == "warning")
    unknown = [r["kernel"] for r in report["llm"]["rows"] if r["status"] == "unknown"]
    return row | {"errors": s["errors"], "warnings": s["warnings"], "unknown": s["unknown"],
                  "warnings_on": dict(left), "unknown_kernels": unknown}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", help="comma-separated words; configs whose file name contains one")
    ap.add_argument("--targets", default="cuda,metal,vulkan")
    ap.add_argument("--no-contracts", action="store_true", help="pass --no-contracts (the findings they refute)")
    ap.add_argument("--json", help="also append one JSON line per run to this file")
    args = ap.parse_args()
    configs = sorted(PANEL.glob("*.json"))
    if args.models:
        configs = [c for c in configs if any(w in c.stem for w in args.models.split(","))]
    extra = ["--no-contracts"] if args.no_contracts else []
    print(f"{'model':32} {'target':7} {'err':>4} {'warn':>4} {'unk':>4} {'s':>7} {'RSS MB':>7}  warnings on")
    for config in configs:
        for target in args.targets.split(","):
            row = run(config, target, extra)
            if args.json:
                with open(args.json, "a") as f:
                    f.write(json.dumps(row) + "\n")
            if "failed" in row:
                print(f"{row['model']:32} {target:7} failed (exit {row['exit']}): {row['failed'][0]}")
                continue
            where = ", ".join(f"{k} x{n}" for k, n in row["warnings_on"].items())
            print(f"{row['model']:32} {target:7} {row['errors']:4} {row['warnings']:4} {row['unknown']:4} "
                  f"{row['seconds']:7.1f} {row['peak_rss_mb']:7}  {where}", flush=True)


if __name__ == "__main__":
    main()
