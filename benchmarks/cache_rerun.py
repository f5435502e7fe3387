"""What the result cache saves on a re-run over unchanged kernels (analyzer/command/cache.py).

Runs each command twice with one fresh cache directory, as `kernelrace ... --format json -v`, in
a subprocess: `check` over the fixtures directory, and `llm` for one small model shape (TVM's
builds are not cached, so a build's seconds are reported apart from its kernels' analysis
seconds). Prints, per command, the first and second run's analysis seconds (the JSON kernels'
`seconds`: on a hit, the time spent reading the entry), their ratio (the issue asks <= 5%), the
wall-clock seconds of each run, and whether the reports are the same but for timing fields:

    python benchmarks/cache_rerun.py [--jobs 1] [--llm-target cuda] [--llm-only NAME[,NAME]]
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def run(args: list[str], cache_dir: str) -> tuple[dict, float, float]:
    """(JSON report, wall seconds, TVM build seconds from -v's "built ... in S s" lines)."""
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "analyzer.cli", *args, "--format", "json", "-v",
                           "--cache-dir", cache_dir], cwd=ROOT, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if proc.returncode not in (0, 1):
        sys.exit(f"kernelrace {' '.join(args)} failed ({proc.returncode}): {proc.stderr.strip()[-2000:]}")
    build = sum(float(s) for s in re.findall(r"^built .* in ([0-9.]+) s, analysed", proc.stderr, re.M))
    return json.loads(proc.stdout), wall, build


def _untimed(value):
    """The report without its timing fields (every "seconds", and "cached"), for comparison."""
    if isinstance(value, dict):
        return {k: _untimed(v) for k, v in value.items() if k not in ("seconds", "cached")}
    if isinstance(value, list):
        return [_untimed(v) for v in value]
    return value


def measure(label: str, args: list[str]) -> None:
    with tempfile.TemporaryDirectory(prefix="kernelrace-cache-") as cache_dir:
        (r1, wall1, build1), (r2, wall2, build2) = run(args, cache_dir), run(args, cache_dir)
    a1 = sum(k["seconds"] for k in r1["kernels"])
    a2 = sum(k["seconds"] for k in r2["kernels"])
    hits = sum(k["cached"] for k in r2["kernels"])
    print(f"{label}: {len(r1['kernels'])} kernel(s), {hits} read from the cache on the second run")
    print(f"  analysis seconds: first {a1:.3f}, second {a2:.4f}, second/first {a2 / a1:.2%}" if a1 else
          "  analysis seconds: none")
    print(f"  wall seconds: first {wall1:.2f}, second {wall2:.2f}"
          + (f" (TVM builds, not cached: {build1:.2f} and {build2:.2f})" if build1 or build2 else ""))
    print(f"  same report but for timing fields: {'yes' if _untimed(r1) == _untimed(r2) else 'NO'}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--jobs", default="1", help="worker processes (default 1: analysis seconds add up)")
    ap.add_argument("--llm-target", default="cuda")
    ap.add_argument("--llm-only", default="_merge_state_inplace,_copy_single_page,gpu_2d_continuous_cumsum,"
                                          "_attention_decode,llama_rope_with_position_map",
                    help="kernels of `kernelrace llm --only` (default: five, quick to build)")
    a = ap.parse_args()
    jobs = ["--jobs", a.jobs]
    measure("check tests/fixtures", ["check", "tests/fixtures", "--no-config", *jobs])
    measure(f"llm (8 heads, head_dim 64, {a.llm_target})",
            ["llm", "--num-qo-heads", "8", "--num-kv-heads", "8", "--head-dim", "64", "--target", a.llm_target,
             "--only", a.llm_only, "--no-config", *jobs])


if __name__ == "__main__":
    main()
