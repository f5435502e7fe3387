"""The corpus sweep the test suite pins a slice of: every builder of TVM's LLM corpus
(analyzer/tvm/corpus.py) at every head_dim and target, each emitted file parsed and lowered, and
with `--analyse` each build checked for error findings beyond the known real races.

tests/test_tvm_corpus.py runs the same checks on head_dim 128 (every builder, cuda, metal and
vulkan) and on a pinned slice of the other head_dims; this script runs them all:

    python benchmarks/corpus_sweep.py [--head-dims 64,128,256,512] [--targets cuda,metal]
        [--analyse] [--only WORD[,WORD]]

One line per build (builder, head_dim, target, build and check seconds, what failed), then a
summary; exits 1 if any build failed a check.

`--dlight` runs instead the sweep of dlight-scheduled workloads (analyzer/tvm/workloads.py) that
tests/test_dlight_workloads.py pins a slice of: each builds for cuda, metal and vulkan, with no
race and no `unknown`.
"""

from __future__ import annotations

import argparse
import sys
import time
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from analyzer.analysis.pairing import races  # noqa: E402
from analyzer.frontend import lower_source  # noqa: E402
from analyzer.pipeline import Options, check_built, with_builtin_contracts  # noqa: E402
from analyzer.tvm.corpus import corpus_builds  # noqa: E402
from test_tvm_corpus import assert_only_known_races  # noqa: E402

# Builders TVM 0.27 cannot build for WebGPU (64-bit integers), as tests/test_wgsl.py expects.
WEBGPU_INT64 = {"gpu_multinomial_from_uniform", "generic_get_sample_index"}


def parses_and_lowers(mod) -> None:
    # What kernelrace reads: the emitted source, or for vulkan one SPIR-V module per kernel.
    kernels = [k for name, text in mod.files() for k in lower_source(text, mod.lang, name)]
    if mod.lang == "spirv":     # each module's entry point is `main`: one per kernel of the build
        assert len(kernels) == len(mod.kernels), "kernels differ from the build's"
    else:
        assert sorted(k.name for k in kernels) == sorted(k.name for k in mod.kernels), "kernels differ from the build's"
    assert all(k.body for k in kernels), "a kernel lowered to an empty body"


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--head-dims", default="64,128,256,512")
    ap.add_argument("--targets", default="cuda,metal")
    ap.add_argument("--analyse", action="store_true",
                    help="also check each build: no error finding but the known races (solver cross-check on)")
    ap.add_argument("--only", default="", help="builder names containing one of these words")
    ap.add_argument("--dlight", action="store_true", help="the dlight workloads' sweep instead")
    args = ap.parse_args()
    only = [w for w in args.only.split(",") if w] or None
    if args.dlight:
        return dlight(only)
    races.CROSS_CHECK = args.analyse      # as the tests do: the solver-free proof checked by the solver
    failed, done = [], 0
    print(f"{'builder':42} {'hd':>4} {'target':7} {'build s':>8} {'check s':>8}  result")
    for b in corpus_builds([int(h) for h in args.head_dims.split(",")], args.targets.split(","), only):
        if b.target == "webgpu" and b.name in WEBGPU_INT64:
            ok, what = b.module is None, "refused (int64), as expected" if b.module is None else "built: expected a refusal"
        elif b.module is None:
            ok, what = False, f"build failed: {b.error}"
        else:
            ok, what = True, "ok"
        t0 = time.perf_counter()
        if ok and b.module is not None:
            try:
                parses_and_lowers(b.module)
                if args.analyse:
                    spec = next(s for s in _specs(b.head_dim) if s.endswith(":" + b.name))
                    options = Options(timeout_ms=5000, hints="off")
                    if b.target == "webgpu":
                        options = with_builtin_contracts(options, spec, b.module.params)
                    assert_only_known_races(spec, check_built(b.module, options))
            except AssertionError as exc:
                ok, what = False, f"failed: {exc}"
            except Exception:
                ok, what = False, "crashed: " + traceback.format_exc().strip().splitlines()[-1]
        done += 1
        if not ok:
            failed.append(f"{b.name} {b.head_dim} {b.target}: {what}")
        print(f"{b.name:42} {b.head_dim:4d} {b.target:7} {b.seconds:8.2f} {time.perf_counter() - t0:8.2f}  {what}",
              flush=True)
    print(f"{done} build(s), {len(failed)} failed")
    for line in failed:
        print("  " + line)
    return 1 if failed else 0


def dlight(only: list[str] | None) -> int:
    from test_dlight_workloads import _id, cases, check_workload

    failed = []
    sweep = [c for c in cases(sweep=True) if not only or any(w in c[0].split(":")[1] for w in only)]
    for spec, params, target in sweep:
        t0 = time.perf_counter()
        try:
            check_workload(spec, params, target)
            what = "ok"
        except AssertionError as exc:
            what = f"failed: {exc}"
        except Exception:
            what = "crashed: " + traceback.format_exc().strip().splitlines()[-1]
        if what != "ok":
            failed.append(f"{_id(spec, params, target)}: {what}")
        print(f"{_id(spec, params, target):60} {time.perf_counter() - t0:8.2f}  {what}", flush=True)
    print(f"{len(sweep)} workload build(s), {len(failed)} failed")
    for line in failed:
        print("  " + line)
    return 1 if failed else 0


def _specs(head_dim: int) -> list[str]:
    from analyzer.tvm.corpus import builders

    return [spec for spec, _ in builders(head_dim)]


if __name__ == "__main__":
    sys.exit(main())
