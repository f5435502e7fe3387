"""What the races between blocks (analyzer/analysis/interblock/grid.py) add to the analysis of TVM's kernels.

For every builder in `analyzer.tvm.corpus` (head_dim 128 by default) on each target: one build,
then the analysis with `--scope block` and with `--scope all`, one after the other in this process
(so machine noise hits both), alternating which runs first. Prints per build both times and the
findings the grid pass adds, then the ratio of the totals:

    python benchmarks/grid_cost.py [--head-dim 128] [--targets cuda,metal,vulkan] [--hints off]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from analyzer.pipeline import Options, check_built  # noqa: E402
from analyzer.tvm.corpus import corpus_builds  # noqa: E402


def _timed(module, options):
    t0 = time.perf_counter()
    results = check_built(module, options)
    return time.perf_counter() - t0, results


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--head-dim", type=int, default=128)
    ap.add_argument("--targets", default="cuda,metal")
    ap.add_argument("--timeout", type=float, default=Options.timeout_ms / 1000)
    ap.add_argument("--hints", default="off", choices=("auto", "all", "off"))
    args = ap.parse_args()
    base = dict(timeout_ms=int(args.timeout * 1000), hints=args.hints)
    total = {"block": 0.0, "all": 0.0}
    added: dict[str, int] = {}
    print(f"{'builder':42} {'target':6} {'block s':>8} {'all s':>8}  grid findings")
    for i, b in enumerate(corpus_builds([args.head_dim], args.targets.split(","))):
        if b.module is None:
            print(f"{b.name:42} {b.target:6} build failed: {b.error}")
            continue
        order = ("block", "all") if i % 2 == 0 else ("all", "block")
        times, results = {}, {}
        for scope in order:
            times[scope], results[scope] = _timed(b.module, Options(scope=scope, **base))
            total[scope] += times[scope]
        grid = [f for r in results["all"] for f in r.findings if f.witness and "second_block" in f.witness]
        grid += [f for r in results["all"] for f in r.findings if f.rule == "unknown" and "two blocks" in f.message]
        for f in grid:
            key = f"{f.severity} {f.rule}"
            added[key] = added.get(key, 0) + 1
        shown = ", ".join(f"{f.severity} {f.rule} on {f.second.buffer}" for f in grid) or "-"
        print(f"{b.name:42} {b.target:6} {times['block']:8.2f} {times['all']:8.2f}  {shown}", flush=True)
    print(f"total analysis: block {total['block']:.1f} s, all {total['all']:.1f} s, "
          f"ratio {total['all'] / max(total['block'], 1e-9):.2f}")
    print("grid findings: " + (", ".join(f"{n} {k}" for k, n in sorted(added.items())) or "none"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
