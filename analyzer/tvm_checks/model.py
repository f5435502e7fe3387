"""`kernelrace model`: every device kernel a compiled Relax model ships, checked on each target, in
a kernel x target table.

The model is a Relax IRModule from `MODULE:FUNCTION` (returning an IRModule, or an `nn.Module` and
its `export_tvm` spec as a pair), or a Hugging Face `config.json`, for which kernelrace writes its
own reference model (analyzer/tvm/reference_model.py). Its kernels are lowered, scheduled and
built one at a time (analyzer/tvm/relax_kernels.py), each kernel and target one unit of work in a
worker process: a unit whose process dies (a TVM segfault) is that kernel's `unknown` on that
target, with the signal, and the run goes on. A kernel is built once per target and every rule
checks that build. The config's attention, KV cache and sampling kernels are TVM's LLM runtime's,
checked by `kernelrace llm`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from analyzer.errors import KernelraceError
from analyzer.findings import ERROR, NOTE, WARNING, KernelResult

STEP_PLAN = "lowering the Relax module to its kernels (MLC's phases 1-3)"
STEP_KERNEL = "scheduling (dlight), lowering and building the kernel"


def is_config(spec: str) -> bool:
    return spec.endswith(".json") or (Path(spec).is_file() and ":" not in spec)


def label(spec: str) -> str:
    """The model's name in reports: the config file's stem, or the builder's function."""
    if is_config(spec):
        p = Path(spec)
        return p.parent.name if p.stem == "config" and p.parent.name else p.stem
    return spec.rpartition(":")[2].split(".")[-1]


def load(spec: str, dtype: str | None, target):
    """The model's Relax IRModule (before any pass)."""
    import tvm

    from analyzer.tvm import reference_model
    from analyzer.tvm.builders import call_builder, load_builder

    if is_config(spec):
        return reference_model.export(reference_model.read_config(spec, dtype))
    obj = call_builder(load_builder(spec), spec, {}, target)
    if isinstance(obj, tuple) and len(obj) == 2 and hasattr(obj[0], "export_tvm"):
        try:
            obj = obj[0].export_tvm(obj[1])[0]
        except Exception as exc:  # noqa: BLE001  the user's spec: one line
            lines = str(exc).strip().splitlines()
            raise KernelraceError(f"{spec}: export_tvm failed: {lines[-1] if lines else type(exc).__name__}") from None
    if not isinstance(obj, tvm.IRModule):
        raise KernelraceError(f"model {spec} returned {type(obj).__name__}, expected a Relax IRModule or an "
                              f"(nn.Module, export_tvm spec) pair")
    return obj


# A worker keeps the lowered module of each (spec, dtype, target) it met: every unit of a run
# needs it, and a PrimFunc cannot be sent between processes in this TVM (serialising one crashes).
_LOWERED: dict[tuple, Any] = {}


def _lowered(spec: str, dtype: str | None, target_name: str):
    from analyzer.tvm.builders import make_target
    from analyzer.tvm.relax_kernels import lower_relax

    key = (spec, dtype, target_name)
    if key not in _LOWERED:
        target = make_target(target_name)
        if any(k[:2] != key[:2] for k in _LOWERED):
            _LOWERED.clear()      # one model at a time: the memory of the last one is let go
        try:
            _LOWERED[key] = lower_relax(load(spec, dtype, target), target)
        except KernelraceError:
            raise
        except Exception as exc:  # noqa: BLE001  TVM's own error: one line
            lines = str(exc).strip().splitlines()
            raise KernelraceError(f"{label(spec)}: TVM failed {STEP_PLAN} for {target_name}: "
                                  f"{lines[-1] if lines else type(exc).__name__}") from None
    return _LOWERED[key]


def plan_unit(spec: str, dtype: str | None, target_name: str) -> list[tuple[str, list[str], list[str]]]:
    """A unit of work: the model's distinct kernels for one target, as (name, aliases, callers)."""
    from analyzer.tvm.relax_kernels import kernels

    return [(k.name, k.aliases, k.callers) for k in kernels(_lowered(spec, dtype, target_name))]


def kernel_unit(spec: str, dtype: str | None, target_name: str, name: str, options, want_sources: bool,
                cache) -> tuple[list[KernelResult], float, dict[str, str] | None, str]:
    """A unit of work: one kernel built for one target and checked (every rule on the one build).
    Returns (results, TVM's seconds, the analysed sources when asked for, the schedule's name)."""
    import contextlib
    import io

    from analyzer.pipeline import check_module
    from analyzer.tvm.build import _buffer_shapes, from_lowered
    from analyzer.tvm.builders import emit_and_lower, make_target
    from analyzer.tvm.relax_kernels import prepare

    t0 = time.perf_counter()
    target = make_target(target_name)
    func = _lowered(spec, dtype, target_name)[name]
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            mod, rule = prepare(func, name, target)
            source, host, device = emit_and_lower(mod, target)
    except KernelraceError as exc:
        raise KernelraceError(f"{name}: {exc}") from None
    except Exception as exc:  # noqa: BLE001  TVM's own error: one line
        lines = str(exc).strip().splitlines()
        raise KernelraceError(f"TVM failed {STEP_KERNEL} {name} for {target_name}: "
                              f"{lines[-1] if lines else type(exc).__name__}") from None
    built = from_lowered(f"{label(spec)}:{name}", target_name, {"model": label(spec)}, source, host, device,
                         _buffer_shapes(mod), what=f"{name} of {label(spec)}")
    seconds = time.perf_counter() - t0
    results, sources = check_module(built, options, want_sources, cache)
    return results, seconds, sources, rule


@dataclass
class Cell:
    """One kernel on one target: its results (indices into the run's), or why there are none."""
    kernel: str
    target: str
    results: list[int] = field(default_factory=list)
    schedule: str = ""
    reason: str | None = None       # not analysed: TVM's error, or the worker's death
    failed: str | None = None       # an error of ours
    seconds: float = 0.0


def status(cell: Cell, results: list[KernelResult]) -> tuple[str, dict[str, int]]:
    counts = {ERROR: 0, WARNING: 0, NOTE: 0}
    if cell.failed:
        return "failed", counts
    rs = [results[i] for i in cell.results]
    for r in rs:
        for f in r.findings:
            if not (cell.reason and f.rule == "unknown"):
                counts[f.severity] = counts.get(f.severity, 0) + 1
    if cell.reason or any(r.status == "unknown" for r in rs):
        return "unknown", counts
    return ("findings" if any(r.status == "findings" for r in rs) else "clean"), counts


def table(name: str, shape: dict[str, Any] | None, targets: list[str], kernels: dict[str, tuple[list, list]],
          cells: list[Cell], results: list[KernelResult]) -> dict[str, Any]:
    """The table as data: one row per kernel and target (`kernels`: name -> (aliases, callers))."""
    rows = []
    for c in cells:
        st, counts = status(c, results)
        aliases, callers = kernels.get(c.kernel, ([], []))
        rows.append({"kernel": c.kernel, "aliases": aliases, "callers": callers, "target": c.target, "status": st,
                     "findings": counts, "schedule": c.schedule, "reason": c.reason or c.failed,
                     "seconds": round(c.seconds, 3)})
    return {"command": "model", "model": name, "shape": shape or {}, "targets": list(targets), "rows": rows,
            "skipped": []}


@dataclass
class Run:
    """What `kernelrace model` made: the table's cells and kernels, and every result."""
    name: str
    shape: dict[str, Any] | None
    targets: list[str]
    kernels: dict[str, tuple[list[str], list[str]]]
    cells: list[Cell]
    results: list[KernelResult]
    sources: dict[str, str] = field(default_factory=dict)   # analysed source name -> text (--emit-dir)

    def table(self) -> dict[str, Any]:
        return table(self.name, self.shape, self.targets, self.kernels, self.cells, self.results)


def run(spec: str, targets: list[str], options, workers, dtype: str | None = None, cache=None,
        want_sources: bool = False, say=None, progress=None) -> Run:
    """Plan (one unit per target: the model's kernels there), then one unit per kernel and target,
    all handed to `workers` up front and read in table order. `say(line)`: verbose lines;
    `progress(label, total)`: called before each cell is read, with the number of cells."""
    from analyzer.command.parallel import WorkerDied
    from analyzer.pipeline import not_analysed
    from analyzer.tvm import reference_model

    name = label(spec)
    shape = None
    if is_config(spec):     # the table's title: what sizes the kernels
        full = reference_model.read_config(spec, dtype).as_dict()
        shape = {k: full[k] for k in ("family", "hidden_size", "intermediate_size", "num_attention_heads",
                                      "num_key_value_heads", "head_dim", "vocab_size", "dtype")}
    plans = {t: workers.submit(plan_unit, spec, dtype, t) for t in targets}
    per_target: dict[str, list[tuple[str, list[str], list[str]]]] = {}
    failed_plan: dict[str, str] = {}
    for t, h in plans.items():
        try:
            per_target[t] = h.result()
        except WorkerDied as exc:
            failed_plan[t] = f"{exc} ({STEP_PLAN})"
        except KernelraceError as exc:
            if "TVM failed" not in str(exc):
                raise       # the model itself is bad input: the run's error
            failed_plan[t] = str(exc)
    if not per_target:
        raise KernelraceError(next(iter(failed_plan.values())))
    kernels: dict[str, tuple[list[str], list[str]]] = {}
    for t in targets:
        for k, aliases, callers in per_target.get(t, []):
            have = kernels.setdefault(k, ([], []))
            have[0].extend(a for a in aliases if a not in have[0])
            have[1].extend(c for c in callers if c not in have[1])
    order = [(k, t) for k in kernels for t in targets]
    ahead = {(k, t): workers.submit(kernel_unit, spec, dtype, t, k, options, want_sources, cache)
             for k, t in order if t in per_target and any(k == n for n, _, _ in per_target[t])}
    results: list[KernelResult] = []
    cells: list[Cell] = []
    sources: dict[str, str] = {}
    for k, t in order:
        cell = Cell(k, t)
        cells.append(cell)
        if progress:
            progress(f"{k} [{t}]", len(ahead))
        if (k, t) not in ahead:
            cell.reason = failed_plan.get(t) or f"TVM did not make this kernel for {t}"
            got = [not_analysed(f"{name}:{k}", cell.reason, t, {"model": name})]
        else:
            t0 = time.perf_counter()
            try:
                got, seconds, built_sources, cell.schedule = ahead[k, t].result()
                if say:
                    say(f"built {k} for {t} in {seconds:.2f} s ({cell.schedule}), analysed {len(got)} kernel(s) "
                        f"in {sum(r.seconds for r in got):.2f} s")
                sources.update(built_sources or {})
            except WorkerDied as exc:
                cell.reason = f"{exc} ({STEP_KERNEL})"
                got = [not_analysed(f"{name}:{k}", cell.reason, t, {"model": name})]
            except KernelraceError as exc:
                cell.reason = str(exc)
                got = [not_analysed(f"{name}:{k}", cell.reason, t, {"model": name})]
            except Exception as exc:  # noqa: BLE001  a bug of ours: this cell fails, the run goes on
                cell.failed = f"internal error: {type(exc).__name__}: {exc}"
                got = []
            cell.seconds = time.perf_counter() - t0
        cell.results = list(range(len(results), len(results) + len(got)))
        results.extend(got)
    return Run(name, shape, targets, kernels, cells, results, sources)
