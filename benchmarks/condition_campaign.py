"""Race conditions against brute force (issue 40): is each finding's condition right?

The random kernels of the differential campaign (benchmarks/differential.py: one block, up to three
scalar parameters) are checked by kernelrace with their parameters symbolic, and run by the
oracle at every point of a grid of parameter values. For each pair of statements a finding names,
the union of its findings' conditions (their ISL sets, which the text output prints) is compared
with where the oracle sees the two statements race:

- an exact condition must hold exactly at the points where they race;
- a sufficient one (`races at least when ...`) must hold only at points where they race;
- a pair the oracle sees racing at some point must have a finding (else "missed").

Points where the kernel is undefined for the oracle (a negative index, an overflow) are left out,
and so are, for one pair, the points where its two stores differ only through loads that race with
another thread's write (the load's race is the race there; see `differential.read_dependent`).

    python benchmarks/condition_campaign.py --kernels N --seed S [--dialect cuda]
"""

from __future__ import annotations

import argparse
import itertools
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import islpy as isl

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT))

import differential as D  # noqa: E402

RULES = D.RACE_RULES - {"barrier-scope"}
GRIDS = {1: range(0, 7), 2: range(0, 5), 3: (0, 1, 2, 4)}   # values of each parameter, by their number


def holds(isl_set: str, point: dict) -> bool:
    """Does the condition's ISL set (over parameters and launch extents) contain `point`?"""
    s = isl.Set(isl_set)
    for i in range(s.dim(isl.dim_type.param)):
        name = s.get_dim_name(isl.dim_type.param, i)
        if name not in point:
            raise KeyError(name)
        s = s.fix_val(isl.dim_type.param, i, isl.Val.int_from_si(s.get_ctx(), point[name]))
    return not s.is_empty()


class Mismatches(list):
    """The mismatches, each printed as it is found when `live` (a long campaign's first ones can
    be looked at while it runs)."""
    live = False

    def append(self, m) -> None:
        super().append(m)
        if self.live:
            print("\n---", m[0], "lines", m[1], *m[3:], "\n" + m[2], flush=True)


def check_kernel(case: D.Case, dialect: str, workdir: Path, tally: Counter, mismatches: list) -> None:
    used = D.used_params(case.kernel)
    if not used:
        return
    em = D.emit(case.kernel, dialect, ["// condition campaign"])
    subject = D.Subject(em, case.kernel.block, workdir)
    result = D.ModeResult(dialect, "symbolic")
    findings = D.run_kernelrace(subject, {}, D.KERNEL_TIMEOUT_S, result)
    if findings is None:
        tally["not analysed"] += 1
        return
    tally["kernels"] += 1
    bx, by, bz = case.kernel.block
    launch = {"blockDim_x": bx, "blockDim_y": by, "blockDim_z": bz, "gridDim_x": 1, "gridDim_y": 1, "gridDim_z": 1}
    by_pair: dict[tuple, list] = {}
    for f in findings:
        if f.rule in RULES:
            key = tuple(sorted((subject.location_line(f.first), subject.location_line(f.second))))
            by_pair.setdefault(key, []).append(f)
    lines = {p: n for n, p in em.lines.items()}
    racy_at: dict[tuple, set] = {}
    # Points where the pair's stores differ only through loads that race (differential.read_dependent):
    # the load's race is the race there, and the pair may be said to race or not.
    either_at: dict[tuple, set] = {}
    points = []
    for values in itertools.product(GRIDS[len(used)], repeat=len(used)):
        params = dict(zip(used, values))
        try:
            verdict = D.oracle(case.kernel, params, dialect)
        except D.IllDefined:
            continue
        points.append(params)
        for (pa, pb) in verdict.pairs:
            racy_at.setdefault(tuple(sorted((lines[pa], lines[pb]))), set()).add(tuple(values))
        for (pa, pb) in verdict.read_dependent_pairs:
            either_at.setdefault(tuple(sorted((lines[pa], lines[pb]))), set()).add(tuple(values))
    tally["points"] += len(points)
    undecided = any(f.rule == "unknown" for f in findings)
    for pair in sorted(set(by_pair) | set(racy_at)):
        got = by_pair.get(pair, [])
        racy = racy_at.get(pair, set())
        if not got and undecided:
            tally["pairs unknown"] += 1           # the kernel has pairs the analysis left undecided
            continue
        if not got:
            tally["missed pairs"] += 1
            mismatches.append(("missed", pair, em.text, sorted(racy)[:3]))
            continue
        if any(f.condition_sets is None or f.condition_sets[0] is None for f in got):
            tally["pairs without a set"] += 1     # a witness's values: checked by the differential campaign
            continue
        exact = all(f.condition_kind == "exact" for f in got)
        tally["exact pairs" if exact else "sufficient pairs"] += 1
        for params in points:
            if tuple(params.values()) in either_at.get(pair, set()):
                continue
            point = {**launch, **params}
            said = any(holds(f.condition_sets[0], point) for f in got)
            races = tuple(params.values()) in racy
            if said and not races:
                tally["said, not racing"] += 1
                mismatches.append(("said, not racing", pair, em.text, params, [f.condition for f in got]))
                break
            if exact and races and not said:
                tally["racing, not said"] += 1
                mismatches.append(("racing, not said", pair, em.text, params, [f.condition for f in got]))
                break
        else:
            tally["pairs right"] += 1


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kernels", type=int, default=200, help="random kernels drawn (those without parameters skipped)")
    ap.add_argument("--seed", type=int, default=20261206)
    ap.add_argument("--dialect", default="cuda", choices=D.DIALECTS)
    ap.add_argument("--show", type=int, default=3, help="mismatching kernels printed")
    ap.add_argument("--only", default=None, help="print only mismatches of this kind")
    ap.add_argument("--live", action="store_true", help="print each mismatch as it is found")
    args = ap.parse_args(argv)
    tally: Counter = Counter()
    mismatches = Mismatches()
    mismatches.live = args.live
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="kernelrace-conditions-") as tmp:
        def body(case):
            try:
                D.check_constant_indices(case.kernel)
            except D.IllDefined:
                return
            check_kernel(case, args.dialect, Path(tmp), tally, mismatches)
        D.run_hypothesis(args.seed, args.kernels, body)
    print(f"seed {args.seed}, {args.dialect}, {time.perf_counter() - t0:.0f} s")
    for k in ("kernels", "not analysed", "points", "exact pairs", "sufficient pairs", "pairs without a set",
              "pairs right", "said, not racing", "racing, not said", "pairs unknown", "missed pairs"):
        print(f"  {k}: {tally[k]}")
    for m in [m for m in mismatches if args.only in (None, m[0])][:args.show]:
        print("\n---", m[0], "lines", m[1], *m[3:])
        print(m[2])
    return 1 if tally["said, not racing"] or tally["racing, not said"] or tally["missed pairs"] else 0


if __name__ == "__main__":
    sys.exit(main())
