"""Recall by barrier deletion over TVM's kernels, and what `redundant-barrier` says of each barrier.

For every builder in `analyzer.tvm.corpus` at each head_dim and target: build it, then delete each
barrier of the emitted source in turn (`analyzer.command.mutants`) and check the mutant. A mutant is
*caught* when it has a race finding the original does not; otherwise the deleted barrier ordered
nothing kernelrace can see, and the original's `redundant-barrier` note should name it. One line
per mutant, then the counts:

    python benchmarks/barrier_recall.py [--head-dims 128] [--targets cuda,metal,vulkan]

Outcomes: race (caught), no race (with `redundant=yes` when the rule reports it), unknown (the
mutant has a new undecided pair). A `no race` barrier without the note is one of a pair that
already races in the original (the rule does not vouch for those).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from analyzer.command.mutants import built_checker, check_mutants  # noqa: E402
from analyzer.pipeline import Options  # noqa: E402
from analyzer.tvm.corpus import corpus_builds  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--head-dims", default="128")
    ap.add_argument("--targets", default="cuda,metal,vulkan")
    ap.add_argument("--only", default="", help="comma-separated substrings of builder names")
    args = ap.parse_args()
    options = Options(hints="off")
    counts: Counter = Counter()
    redundant: list[str] = []
    t_start = time.perf_counter()
    for b in corpus_builds([int(x) for x in args.head_dims.split(",")], args.targets.split(","),
                           args.only.split(",") if args.only else None):
        name, target, hd, mod = b.name, b.target, b.head_dim, b.module
        if mod is None:
            print(f"{name} {target} {hd}: build failed: {b.error}")
            continue
        t0 = time.perf_counter()
        _, verdicts = check_mutants(mod.files(), mod.lang, built_checker(mod), options)
        for v in verdicts:
            m = v.mutant
            counts[v.outcome] += 1
            if v.redundant:
                counts["redundant note"] += 1
                redundant.append(f"{name} [{target}, head_dim {hd}] {m.file}:{m.line}: {m.text}")
                if v.outcome != "no race":
                    counts["note contradicted"] += 1
            print(f"{name:40} {target:6} {hd:4} {m.file}:{m.line:<5} {v.outcome:8} "
                  f"new={v.new_races} redundant={'yes' if v.redundant else 'no'} {v.seconds:6.2f}s",
                  flush=True)
        print(f"  {name} {target} {hd}: {len(verdicts)} barrier(s), {time.perf_counter() - t0:.1f} s",
              flush=True)
    total = sum(counts[k] for k in ("race", "no race", "unknown"))
    print(f"\nmutants: {total}; caught (new race): {counts['race']}; no race: {counts['no race']}; "
          f"unknown: {counts['unknown']}; redundant-barrier notes: {counts['redundant note']} "
          f"(contradicted by a mutant: {counts['note contradicted']}); {time.perf_counter() - t_start:.0f} s")
    for line in redundant:
        print(f"  redundant: {line}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
