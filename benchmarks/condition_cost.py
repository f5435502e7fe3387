"""What race conditions cost (issue 40: at most 15% of the analysis of TVM's corpus), side by side.

For every builder in `analyzer.tvm.corpus` (head_dim 128 by default) on cuda and metal, TVM's
output is parsed once per arm and analysed as `kernelrace lint` analyses it (the CLI's default
options, the builder's built-in contracts), twice: with race conditions projected (the default)
and without (`kernel.CONDITIONS_PER_KERNEL = 0`: every finding says its witness's values, which
costs nothing), the two arms alternating which goes first, kernel by kernel, so machine noise hits
both. Times are the CPU seconds of this process (the analysis runs in it), wall seconds beside.
The last lines are the totals' ratio (with / without) and the findings' agreement (the same
findings in both arms, but for their conditions).

    python benchmarks/condition_cost.py [--head-dim 128] [--targets cuda,metal] [--only WORD,...]
        [--no-builtin-contracts]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from analyzer.analysis import kernel as kernel_analysis  # noqa: E402
from analyzer.pipeline import Options, built_kernels, check_built, with_builtin_contracts  # noqa: E402
from analyzer.tvm.corpus import corpus_builds  # noqa: E402

PROJECTED = kernel_analysis.CONDITIONS_PER_KERNEL


def _analyse(module, options, conditions: bool) -> tuple[float, float, list, int]:
    """(CPU s, wall s, findings without their conditions, how many conditions were projected)."""
    kernel_analysis.CONDITIONS_PER_KERNEL = PROJECTED if conditions else 0
    try:
        kernels = built_kernels(module)
        c0, w0 = time.process_time(), time.perf_counter()
        results = check_built(module, options, kernels)
        cpu, wall = time.process_time() - c0, time.perf_counter() - w0
    finally:
        kernel_analysis.CONDITIONS_PER_KERNEL = PROJECTED
    found = [f for r in results for f in r.findings]
    seen = sorted((f.rule, f.kernel, f.second.line, f.first.line if f.first else 0, f.severity) for f in found)
    return cpu, wall, seen, sum(f.condition_kind in ("exact", "sufficient") for f in found)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--head-dim", type=int, default=128)
    ap.add_argument("--targets", default="cuda,metal")
    ap.add_argument("--only", default=None, help="builders whose name contains one of these words")
    ap.add_argument("--no-builtin-contracts", action="store_true",
                    help="without the contracts `kernelrace lint` applies (more findings, more conditions)")
    args = ap.parse_args()
    base = Options()
    rows, differ = [], []
    findings = projected = 0
    print(f"{'builder':42} {'target':6} {'with cpu s':>10} {'without':>8} {'ratio':>6} {'with wall':>9} {'without':>8}")
    builds = corpus_builds([args.head_dim], args.targets.split(","), args.only.split(",") if args.only else None)
    for i, b in enumerate(builds):
        if b.module is None:
            print(f"{b.name:42} {b.target:6} build failed: {b.error}")
            continue
        options = base if args.no_builtin_contracts else with_builtin_contracts(base, b.spec, b.module.params)
        order = (True, False) if i % 2 == 0 else (False, True)
        got = {c: _analyse(b.module, options, c) for c in order}
        (cw, ww, fw, pw), (co, wo, fo, _) = got[True], got[False]
        findings += len(fw)
        projected += pw
        if fw != fo:
            differ.append(f"{b.name} {b.target}")
        rows.append((cw, co, ww, wo))
        print(f"{b.name:42} {b.target:6} {cw:10.2f} {co:8.2f} {cw / max(co, 1e-9):6.2f} {ww:9.2f} {wo:8.2f}",
              flush=True)
    cw, co, ww, wo = (sum(r[k] for r in rows) for k in range(4))
    print(f"total CPU: with conditions {cw:.1f} s, without {co:.1f} s, ratio {cw / co:.3f} over {len(rows)} builds")
    print(f"total wall: with conditions {ww:.1f} s, without {wo:.1f} s, ratio {ww / wo:.3f}")
    print(f"findings: {findings}; with a condition projected: {projected}")
    print(f"findings differing between the arms (but for conditions): {len(differ)}"
          + (f" ({', '.join(differ)})" if differ else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
