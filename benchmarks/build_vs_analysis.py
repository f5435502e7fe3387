"""TVM build time against kernelrace analysis time, kernel by kernel, measured side by side.

For every builder in `analyzer.tvm.corpus` (head_dim 128 by default) on cuda and metal (and vulkan
when asked): the time TVM takes to build it, and the time kernelrace takes to parse, lower and
analyse what TVM emitted. For vulkan the build includes producing the SPIR-V (TIR to GLSL,
glslangValidator, spirv-val, spirv-dis), which this TVM's missing Vulkan codegen would otherwise do.
Both run in this one process, one after the other for each kernel, so machine noise hits both.
Each kernel is analysed as `kernelrace lint` and `kernelrace llm` analyse it: with the CLI's
default options and the contracts TVM's runtime guarantees for its builder (docs/contracts.md);
`--no-builtin-contracts` measures without them (more findings, and their witness searches).
The last lines are the ratio of the totals and of the medians, and how many kernels are above 1.0
(the issue's second condition).

This TVM wheel has no CUDA runtime, so its CUDA build stops at CUDA C. A CUDA-enabled TVM goes on
to compile that source inside the same build call, and the driver assembles the PTX at load. Where
that step can be timed on this machine (benchmarks/cuda_compile.py: nvcc on PATH, or NVIDIA's NVRTC
and ptxas wheels from `pip install ".[bench]"`; no GPU needed), it is timed on each CUDA build, in
its own column, and a second ratio line adds it: what a user's CUDA deployment build costs. The
first ratio line stays on TVM's build as this wheel runs it.

Each build and each analysis runs `--repeat` times (default 3) and keeps its fastest, so a burst
of load on this shared machine does not decide a row. Last, the ten slowest analyses with the share
of each phase: parse (the front end: Lark and the lowering), symbolic (the executor), decide (Z3's
checks), and the rest (pairing, witnesses and their replay, rules and reports).

    python benchmarks/build_vs_analysis.py [--head-dim 128] [--targets cuda,metal,vulkan] [--hints off]
        [--no-builtin-contracts] [--no-cuda-compile] [--repeat 3]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import z3  # noqa: E402

from analyzer.analysis.execution.symbolic import SymbolicExecutor  # noqa: E402
import analyzer.pipeline as pipeline  # noqa: E402
from analyzer.pipeline import Options, check_built, with_builtin_contracts  # noqa: E402
from analyzer.tvm.build import build  # noqa: E402
from analyzer.tvm.corpus import corpus_builds  # noqa: E402
from cuda_compile import CompileError, toolchain  # noqa: E402

PHASES = ("parse", "symbolic", "decide", "rest")


class PhaseClock:
    """Exclusive seconds per phase: time in a phase entered from another (a Z3 check inside the
    executor) counts for the inner one only. Installed by wrapping the phases' entry functions."""

    def __init__(self):
        self.seconds: dict[str, float] = defaultdict(float)
        self._stack: list[list] = []

    def wrap(self, owner, attr: str, phase: str) -> None:
        inner = getattr(owner, attr)
        clock = self

        def timed(*args, **kwargs):
            now = time.perf_counter()
            if clock._stack:
                outer = clock._stack[-1]
                clock.seconds[outer[0]] += now - outer[1]
            clock._stack.append([phase, now])
            try:
                return inner(*args, **kwargs)
            finally:
                end = time.perf_counter()
                clock.seconds[phase] += end - clock._stack.pop()[1]
                if clock._stack:
                    clock._stack[-1][1] = end

        setattr(owner, attr, timed)

    def take(self) -> dict[str, float]:
        out, self.seconds = dict(self.seconds), defaultdict(float)
        return out


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
    ap.add_argument("--no-cuda-compile", action="store_true",
                    help="do not time CUDA's compile step (nvcc, or NVRTC and ptxas)")
    ap.add_argument("--repeat", type=int, default=3, help="runs of each build and analysis; the fastest kept")
    args = ap.parse_args()
    compiler = None if args.no_cuda_compile else toolchain()
    options = Options(timeout_ms=int(args.timeout * 1000), hints=args.hints)
    clock = PhaseClock()
    clock.wrap(pipeline, "_lowered", "parse")
    clock.wrap(SymbolicExecutor, "run", "symbolic")
    clock.wrap(z3.Solver, "check", "decide")
    rows = []
    print(f"CUDA compile step: {compiler.name if compiler else 'not timed (no nvcc, no NVRTC wheels)'}; "
          f"best of {args.repeat}")
    print(f"{'builder':42} {'target':6} {'lines':>6} {'build s':>8} {'cc s':>6} {'analysis s':>10} {'ratio':>6} "
          f"{'+cc':>6}  status")
    for b in corpus_builds([args.head_dim], args.targets.split(",")):
        if b.module is None:
            print(f"{b.name:42} {b.target:6} build failed: {b.error}")
            continue
        build_s = b.seconds
        for _ in range(args.repeat - 1):
            t0 = time.perf_counter()
            build(b.spec, b.params, b.target)
            build_s = min(build_s, time.perf_counter() - t0)
        opts = options if args.no_builtin_contracts else with_builtin_contracts(options, b.spec, b.module.params)
        a, phases = None, {}
        for _ in range(args.repeat):
            clock.take()
            t1 = time.perf_counter()
            results = check_built(b.module, opts)
            took = time.perf_counter() - t1
            if a is None or took < a:
                a, phases = took, clock.take()
        phases["rest"] = max(0.0, a - sum(phases.get(p, 0.0) for p in PHASES if p != "rest"))
        status = ",".join(sorted({r.status for r in results}))
        compile_s = 0.0
        if compiler is not None and b.target == "cuda":
            try:
                compile_s = min(compiler.seconds(b.module.files()) for _ in range(args.repeat))
            except CompileError as exc:
                print(f"{b.name:42} {b.target:6} {exc}")
        rows.append((b.name, b.target, build_s, a, compile_s, phases))
        lines = sum(len(text.splitlines()) for _, text in b.module.files())
        print(f"{b.name:42} {b.target:6} {lines:6d} {build_s:8.2f} {compile_s:6.2f} {a:10.2f} "
              f"{a / build_s:6.2f} {a / (build_s + compile_s):6.2f}  {status}", flush=True)
    builds = [r[2] for r in rows]
    analyses = [r[3] for r in rows]
    full = [r[2] + r[4] for r in rows]
    print(f"total: build {sum(builds):.1f} s, analysis {sum(analyses):.1f} s over {len(rows)} builds")
    print(f"median: build {statistics.median(builds):.2f} s, analysis {statistics.median(analyses):.2f} s")
    print(f"median kernel analysis/build time ratio: {statistics.median(a / b for b, a in zip(builds, analyses)):.2f}")
    print(f"kernels above 1.0: {sum(a > b for b, a in zip(builds, analyses))} of {len(rows)}")
    print("slowest ten analyses, share by phase:")
    print(f"  {'builder':42} {'target':6} {'analysis s':>10} " + " ".join(f"{p:>8}" for p in PHASES))
    for name, target, _, a, _, phases in sorted(rows, key=lambda r: -r[3])[:10]:
        print(f"  {name:42} {target:6} {a:10.2f} " + " ".join(f"{100 * phases.get(p, 0.0) / a:7.0f}%" for p in PHASES))
    totals = {p: sum(r[5].get(p, 0.0) for r in rows) for p in PHASES}
    print("  all builds: " + ", ".join(f"{p} {100 * v / sum(analyses):.0f}%" for p, v in totals.items()))
    if compiler is not None:
        cuda = [(f, a) for f, a, r in zip(full, analyses, rows) if r[1] == "cuda"]
        print(f"with CUDA's compile step ({compiler.name}, {sum(r[4] for r in rows):.1f} s), CUDA builds: "
              f"analysis/build time ratio {sum(a for _, a in cuda) / sum(f for f, _ in cuda):.2f}, "
              f"{sum(a > f for f, a in cuda)} of {len(cuda)} kernels above 1.0; all targets: "
              f"{sum(analyses) / sum(full):.2f}")
    print(f"analysis/build time ratio: {sum(analyses) / sum(builds):.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
