"""TVM build time against kernelrace analysis time, kernel by kernel, measured side by side.

For every builder in `analyzer.tvm.corpus` (head_dim 128 by default) on cuda and metal (and vulkan
when asked): the time TVM takes to build it, and the time kernelrace takes to parse, lower and
analyse what TVM emitted. For vulkan the build includes producing the SPIR-V (TIR to GLSL,
glslangValidator, spirv-val, spirv-dis), which this TVM's missing Vulkan codegen would otherwise do.
Both run in this one process, one after the other for each kernel, so machine noise hits both.
Each kernel is analysed as `kernelrace lint` and `kernelrace llm` analyse it: with the CLI's
default options and the contracts TVM's runtime guarantees for its builder (docs/contracts.md);
`--no-builtin-contracts` measures without them (more findings, and their witness searches).
The last line is the ratio of the totals and of the medians:

    python benchmarks/build_vs_analysis.py [--head-dim 128] [--targets cuda,metal,vulkan] [--hints off]
        [--no-builtin-contracts]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from analyzer.tvm.corpus import corpus_builds  # noqa: E402
from analyzer.pipeline import Options, check_built, with_builtin_contracts  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--head-dim", type=int, default=128)
    ap.add_argument("--targets", default="cuda,metal")
    ap.add_argument("--timeout", type=float, default=Options.timeout_ms / 1000,
                    help="solver budget per query, seconds (the CLI default)")
    ap.add_argument("--hints", default=Options.hints, choices=("auto", "all", "off"),
                    help="fix hints, re-checked by re-analysis (the CLI default: auto)")
    ap.add_argument("--no-builtin-contracts", action="store_true",
                    help="analyse without the contracts `kernelrace lint` and `llm` apply to TVM's builders")
    args = ap.parse_args()
    options = Options(timeout_ms=int(args.timeout * 1000), hints=args.hints)
    rows = []
    print(f"{'builder':42} {'target':6} {'lines':>6} {'build s':>8} {'analysis s':>10} {'ratio':>6}  status")
    for b in corpus_builds([args.head_dim], args.targets.split(",")):
        if b.module is None:
            print(f"{b.name:42} {b.target:6} build failed: {b.error}")
            continue
        t1 = time.perf_counter()
        results = check_built(b.module, options if args.no_builtin_contracts
                              else with_builtin_contracts(options, b.spec, b.module.params))
        a = time.perf_counter() - t1
        status = ",".join(sorted({r.status for r in results}))
        rows.append((b.seconds, a))
        lines = sum(len(text.splitlines()) for _, text in b.module.files())
        print(f"{b.name:42} {b.target:6} {lines:6d} {b.seconds:8.2f} {a:10.2f} "
              f"{a / b.seconds:6.2f}  {status}", flush=True)
    builds = [b for b, _ in rows]
    analyses = [a for _, a in rows]
    print(f"total: build {sum(builds):.1f} s, analysis {sum(analyses):.1f} s over {len(rows)} builds")
    print(f"median: build {statistics.median(builds):.2f} s, analysis {statistics.median(analyses):.2f} s")
    print(f"median kernel analysis/build time ratio: {statistics.median(a / b for b, a in rows):.2f}")
    print(f"analysis/build time ratio: {sum(analyses) / sum(builds):.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
