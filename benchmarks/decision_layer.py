"""The decision layer over the corpus: Z3 alone against integer sets first, side by side, and the
two procedures' answers compared on every query (analyzer/analysis/decision/decide.py).

For every corpus builder (head_dim 128) and target, each kernel is analysed twice in this one
process, one run right after the other (the order alternating between kernels, so that a warm
cache favours neither): with every query sent to Z3 (`decide.ENABLED` off: the analysis before
the decision layer) and with Presburger queries decided by ISL first. Printed per build: TVM's
build time, both analysis times, both ratios, and the Z3 checks of each; then the totals, where
Z3 time went by procedure, and whether the findings (as `--format json` reports them: rules,
locations, witnesses, conditions) are the same in both runs.

`--differential` also records every query Z3 decided in the Z3-only runs and answers it with
ISL: a disagreement (ISL empty where Z3 found a model, or a point that does not satisfy the
query) is counted and printed; a query ISL declines (not Presburger, out of its budget) is
counted as such. Z3's unknowns are left out (nothing to compare).

    python benchmarks/decision_layer.py [--targets cuda,metal,vulkan] [--only WORD,...] [--differential]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import z3  # noqa: E402

from analyzer.analysis.decision import decide  # noqa: E402
from analyzer.pipeline import Options, check_built, with_builtin_contracts  # noqa: E402
from analyzer.tvm.corpus import corpus_builds  # noqa: E402


def _run(module, options, isl: bool):
    """(seconds, Z3 checks, ISL decisions, findings as JSON) of one analysis."""
    decide.ENABLED = isl
    before = Counter(decide.STATS)
    t = time.perf_counter()
    results = check_built(module, options)
    seconds = time.perf_counter() - t
    delta = Counter(decide.STATS)
    delta.subtract(before)
    findings = json.dumps([[f.as_dict() for f in r.findings] for r in results], sort_keys=True, default=str)
    statuses = ",".join(sorted({r.status for r in results}))
    return seconds, delta, findings, statuses


def compare(queries: list, decider: decide.Decider) -> Counter:
    """Each recorded (constraints, Z3's verdict) answered by ISL: counts of agreements, declines
    and disagreements (points checked against the constraints)."""
    out: Counter = Counter()
    for constraints, res in queries:
        if res == z3.unknown:
            out["z3 unknown (not compared)"] += 1
            continue
        d = decider.presburger(constraints)
        if d is None:
            out["isl declined"] += 1
        elif (d.result == decide.SAT) != (res == z3.sat):
            out["disagreement"] += 1
            print(f"  DISAGREEMENT: Z3 {res}, ISL {d.result}", flush=True)
        elif d.result == decide.SAT and not decide.holds_at(d, constraints):
            out["point fails"] += 1
            print(f"  ISL POINT FAILS: {d.point}", flush=True)
        else:
            out[f"agree {d.result}"] += 1
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--head-dim", type=int, default=128)
    ap.add_argument("--targets", default="cuda,metal,vulkan")
    ap.add_argument("--only", default="", help="builders whose name contains one of these words")
    ap.add_argument("--differential", action="store_true",
                    help="answer every query Z3 decided with ISL too, and count disagreements")
    args = ap.parse_args()
    only = [w for w in args.only.split(",") if w] or None
    totals = {False: [0.0, Counter()], True: [0.0, Counter()]}
    build_total, same, differ, diff = 0.0, 0, [], Counter()
    decider = decide.Decider()
    print(f"{'builder':42} {'target':6} {'build s':>7} {'z3 s':>6} {'isl s':>6} {'z3 r':>5} {'isl r':>5} "
          f"{'checks':>6} {'isl':>6}  findings")
    for i, b in enumerate(corpus_builds([args.head_dim], args.targets.split(","), only)):
        if b.module is None:
            print(f"{b.name:42} {b.target:6} build failed: {b.error}")
            continue
        options = with_builtin_contracts(Options(), b.spec, b.module.params)
        row = {}
        for isl in ((False, True) if i % 2 == 0 else (True, False)):
            if not isl and args.differential:
                decide.RECORD = []
            row[isl] = _run(b.module, options, isl)
            if decide.RECORD is not None:
                diff += compare(decide.RECORD, decider)
                decide.RECORD = None
        build_total += b.seconds
        for isl in (False, True):
            totals[isl][0] += row[isl][0]
            totals[isl][1] += row[isl][1]
        ok = row[False][2] == row[True][2]
        same += ok
        if not ok:
            differ.append(f"{b.name} {b.target}")
        print(f"{b.name:42} {b.target:6} {b.seconds:7.2f} {row[False][0]:6.2f} {row[True][0]:6.2f} "
              f"{row[False][0] / b.seconds:5.2f} {row[True][0] / b.seconds:5.2f} "
              f"{row[False][1]['z3 checks']:6d} {row[True][1]['z3 checks']:6d}  "
              f"{'same' if ok else 'DIFFERENT'} {row[True][3]}", flush=True)
    for isl, name in ((False, "Z3 only"), (True, "ISL first")):
        seconds, stats = totals[isl]
        print(f"{name:10}: analysis {seconds:.1f} s, ratio {seconds / build_total:.2f} (build {build_total:.1f} s); "
              f"Z3 checks {stats['z3 checks']} ({stats['z3 seconds']:.1f} s); ISL: "
              f"{stats['isl unsat']} unsat, {stats['isl sat']} sat, {stats['not presburger']} not Presburger, "
              f"{stats['isl out of budget']} out of budget ({stats['isl seconds']:.1f} s)")
    print(f"findings: the same in {same} of {same + len(differ)} builds" + (f"; different: {differ}" if differ else ""))
    if args.differential:
        print("differential:", dict(sorted(diff.items())))
        return 1 if diff["disagreement"] or diff["point fails"] else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
