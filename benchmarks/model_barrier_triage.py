"""Triage of `kernelrace model`'s findings on a model's OpenCL kernels, on a real OpenCL device
(PoCL on the CPU, through pyopencl: `pip install kernelrace[opencl]`).

For every kernel of the model (built as `kernelrace model` builds it, in this process):
- each `redundant-barrier` note: the kernel is run as built and with every barrier the notes call
  redundant deleted, on seeded random inputs (several seeds); the note is consistent with the run
  when every output buffer is equal, bit for bit;
- as a control that such runs can tell, each barrier the analysis did *not* call redundant is
  deleted alone and the kernel run again: a changed output shows the barrier is needed (an
  unchanged one proves nothing: PoCL runs a work-group's items in its own order);
- an error or warning finding is listed for `kernelrace confirm --runtime opencl`.

    python benchmarks/model_barrier_triage.py CONFIG.json [--seeds 3] [--scalar NAME=INT ...]

Symbolic extents without a value (`seq_len`, `batch_size`) get 3 unless given. PoCL's CPU device
has no half precision, so the model is built in float32 (`--dtype`); dlight schedules float32 as it
schedules float16, with other vector widths in places.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

BARRIER = re.compile(r"^\s*barrier\([^;]*\);\s*$")


def _without(source: str, lines: set[int]) -> str:
    out = source.split("\n")
    for n in lines:
        assert BARRIER.match(out[n - 1]), out[n - 1]
        out[n - 1] = ""
    return "\n".join(out)


def main() -> int:
    from analyzer.tvm_checks import model
    from analyzer.dynamic import opencl_run
    from analyzer.pipeline import Options, check_built
    from analyzer.tvm.build import _buffer_shapes, from_lowered
    from analyzer.tvm.builders import emit_and_lower, make_target
    from analyzer.tvm.launches import missing_shapes
    from analyzer.tvm.relax_kernels import prepare

    ap = argparse.ArgumentParser()
    ap.add_argument("spec")
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--dtype", default="float32", help="PoCL's CPU device has no half precision: float32")
    ap.add_argument("--scalar", action="append", default=[])
    args = ap.parse_args()
    given = {k: int(v) for k, _, v in (s.partition("=") for s in args.scalar)}
    device = opencl_run.find_device()
    target = make_target("opencl")
    lowered = model._lowered(args.spec, args.dtype, "opencl")
    totals = {"notes": 0, "consistent": 0, "differ": 0, "controls": 0, "controls_differ": 0, "errors": 0}
    for name, _, _ in model.plan_unit(args.spec, args.dtype, "opencl"):
        mod, _ = prepare(lowered[name], name, target)
        source, host, device_mods = emit_and_lower(mod, target)
        built = from_lowered(f"m:{name}", "opencl", {}, source, host, device_mods, _buffer_shapes(mod))
        results = check_built(built, Options(hints="off"))
        findings = [f for r in results for f in r.findings]
        for f in findings:
            if f.severity in ("error", "warning"):
                totals["errors"] += 1
                print(f"{name}: {f.severity}[{f.rule}] line {f.second.line}: {f.message}")
        notes = {f.second.line for f in findings if f.rule == "redundant-barrier"}
        lines = source.split("\n")
        barriers = {i + 1 for i, line in enumerate(lines) if BARRIER.match(line)}
        if not barriers:
            continue
        values = dict(given)
        for m in missing_shapes(mod, values):
            values[m] = 3
        src = opencl_run.compilable(source)
        variants = {"notes": _without(src, notes)} if notes else {}
        for b in sorted(barriers - notes):
            variants[f"control {b}"] = _without(src, {b})
        differ: dict[str, bool] = {k: False for k in variants}
        for seed in range(args.seeds):
            p = opencl_run.plan(mod, host, values, seed)
            base = opencl_run.run(device, src, p)
            for k, v in variants.items():
                differ[k] |= bool(opencl_run.differences(base, opencl_run.run(device, v, p)))
        if notes:
            totals["notes"] += len(notes)
            totals["differ" if differ["notes"] else "consistent"] += len(notes)
            print(f"{name}: {len(notes)} redundant barrier(s) at {sorted(notes)} deleted: outputs "
                  f"{'DIFFER' if differ['notes'] else 'equal'} over {args.seeds} seed(s) ({values})")
        for k in variants:
            if k.startswith("control"):
                totals["controls"] += 1
                totals["controls_differ"] += differ[k]
                print(f"{name}: needed barrier at line {k.split()[1]} deleted: outputs "
                      f"{'differ' if differ[k] else 'equal (PoCL does not show it)'}")
    print(totals)
    return 1 if totals["differ"] else 0


if __name__ == "__main__":
    sys.exit(main())
