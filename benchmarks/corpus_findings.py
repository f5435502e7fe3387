"""The corpus's findings as JSON lines, to compare verdicts before and after a change to the analysis.

Builds TVM's LLM corpus (analyzer/tvm/corpus.py) as `build_vs_analysis.py` does, analyses every
kernel with the CLI's default options, and writes one line per finding (rule, severity, kernel,
target, buffer, lines, message, witness, fix hint) and one per kernel with its status, sorted, so
two dumps compare with `diff` (timing fields are left out). `--builds FILE` keeps the built modules
in a pickle: the first run writes it, later runs analyse the same emitted sources without
rebuilding (TVM's build is most of the time). `--times` adds each kernel's analysis seconds to
stderr (wall clock and this process's CPU time, steadier on a shared machine), for profiling
while iterating. Which of several equivalent models Z3 returns depends on the order terms were
made in, which follows Python's string hashing in places: the script runs itself with
PYTHONHASHSEED=0; and it analyses each build with Python's cycle collector off (after a
collection): when the collector frees Z3 terms mid-analysis, Z3 reuses their ids, and the models,
hence the witnesses, follow the timing of collections, which any change in allocation shifts.
Two dumps then differ only where the analysis does.

    python benchmarks/corpus_findings.py [--targets cuda,metal,vulkan] [--head-dim 128]
        [--builds /tmp/corpus.pkl] [--only WORD[,WORD]] [--times] [--builtin-contracts] > after.jsonl
    diff before.jsonl after.jsonl
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import pickle
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from analyzer.pipeline import Options, check_built, with_builtin_contracts  # noqa: E402
from analyzer.tvm.corpus import BUILTIN_CONTRACTS, corpus_builds  # noqa: E402

_SPECS = {spec.split(":")[1]: spec for spec in BUILTIN_CONTRACTS}    # builder name -> module:function


def _modules(args) -> list[tuple[str, str, object]]:
    """(builder name, target, built module or None) for the corpus, from `--builds` if it exists."""
    path = Path(args.builds) if args.builds else None
    if path is not None and path.exists():
        return pickle.loads(path.read_bytes())
    mods = [(b.name, b.target, b.module) for b in corpus_builds([args.head_dim], args.targets.split(","))]
    if path is not None:
        path.write_bytes(pickle.dumps(mods))
    return mods


def finding_record(f) -> dict:
    witness = dict(f.witness or {})
    return {"rule": f.rule, "severity": f.severity, "kernel": f.kernel, "target": f.target,
            "buffer": witness.get("buffer"), "file": f.file,
            "second": f.second.line, "first": f.first.line if f.first else None,
            "message": f.message, "witness": witness, "notes": list(f.notes), "fix": f.fix}


def main() -> int:
    if os.environ.get("PYTHONHASHSEED") != "0":
        os.execve(sys.executable, [sys.executable, *sys.argv], os.environ | {"PYTHONHASHSEED": "0"})
    ap = argparse.ArgumentParser()
    ap.add_argument("--head-dim", type=int, default=128)
    ap.add_argument("--targets", default="cuda,metal,vulkan")
    ap.add_argument("--builds", help="pickle of the built modules: written if missing, read if present")
    ap.add_argument("--only", default="", help="builder names containing one of these words")
    ap.add_argument("--times", action="store_true", help="each kernel's analysis seconds, on stderr")
    ap.add_argument("--builtin-contracts", action="store_true",
                    help="with the contracts `kernelrace lint` and `llm` apply to TVM's builders")
    args = ap.parse_args()
    only = [w for w in args.only.split(",") if w]
    options = Options()
    lines = []
    total = cpu_total = 0.0
    for name, target, mod in _modules(args):
        if only and not any(w in name for w in only):
            continue
        if mod is None:
            lines.append(json.dumps({"builder": name, "target": target, "build": "failed"}, sort_keys=True))
            continue
        gc.collect()
        gc.disable()
        try:
            t0, c0 = time.perf_counter(), time.process_time()
            spec = _SPECS.get(name)
            results = check_built(mod, with_builtin_contracts(options, spec, mod.params) if args.builtin_contracts and spec
                                  else options)
            seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
        finally:
            gc.enable()
        total += seconds
        cpu_total += cpu
        if args.times:
            print(f"{name:42} {target:6} {seconds:7.2f} {cpu:7.2f}", file=sys.stderr, flush=True)
        for r in results:
            lines.append(json.dumps({"builder": name, "target": target, "kernel": r.kernel,
                                     "status": r.status, "stopped": r.stopped}, sort_keys=True, default=str))
            for f in r.findings:
                lines.append(json.dumps({"builder": name} | finding_record(f), sort_keys=True, default=str))
    if args.times:
        print(f"total analysis {total:.1f} s, CPU {cpu_total:.1f} s", file=sys.stderr)
    print("\n".join(sorted(lines)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
