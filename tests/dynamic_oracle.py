"""The dynamic oracle over fixtures and builds: what the interpreter (analyzer/dynamic/) observes
racing, set against what the static analysis reports for one block. Shared by
tests/test_dynamic_oracle.py and benchmarks."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from analyzer.cli import build_parser
from analyzer.dynamic import schedule
from analyzer.dynamic.launch import make_launch
from analyzer.dynamic.values import InterpretError
from analyzer.findings import RACE_RULES
from analyzer.pipeline import Options, analyse_kernel, read_source, text_kernels

ORDERS = (("ascending", 0), ("descending", 0), ("random", 1))
# A parameter neither the fixture nor the host code gives: a small extent.
DEFAULT_PARAM = 16


@dataclass
class Outcome:
    name: str
    skipped: str = ""                               # why the interpreter could not run it
    observed: int = 0                               # distinct racing site pairs observed
    static: int = 0                                 # static race findings
    static_observed: int = 0                        # of those, observed dynamically
    missed: list[str] = field(default_factory=list)  # observed races the static analysis did not report


def static_options() -> Options:
    return Options(scope="block", timeout_ms=5_000, hints="off")


def compare(kernel, result, defines: dict[str, int] | None = None, orders=ORDERS, blocks=((0, 0, 0),)) -> Outcome:
    """Run `kernel` under each order and hold every observed race against `result`'s findings."""
    out = Outcome(kernel.name)
    try:
        launch = make_launch(kernel, dict(defines or {}), None, 0, list(blocks), default=DEFAULT_PARAM,
                             contracts=[c["contract"] for c in result.contracts if c["in_force"]])
        observed, inside = {}, set()
        for name, seed in orders:
            run = schedule.run(kernel, launch, schedule.order(name, launch, seed), list(blocks))
            for r in run.races:
                observed.setdefault(r.lines, r)
                if run.in_bounds(r):
                    inside.add(r.lines)
    except InterpretError as exc:
        out.skipped = str(exc)
        return out
    # What the static analysis reports on a pair of lines: a race, or that it could not decide.
    reported, outside = set(), set()
    for f in result.findings:
        # barrier-scope: a race whose barrier does not order its memory
        if f.first is not None and (f.rule in RACE_RULES or f.rule in ("unknown", "barrier-scope")):
            reported.add(frozenset((f.first.line, f.second.line)))
        elif f.first is not None and f.rule == "out-of-bounds":
            outside.add(frozenset((f.first.line, f.second.line)))
    races = [f for f in result.findings if f.rule in RACE_RULES and f.first is not None]
    out.observed = len(observed)
    out.static = len(races)
    out.static_observed = sum(frozenset((f.first.line, f.second.line)) in observed for f in races)
    # A race seen only where one of its threads left a buffer's shape is the out-of-bounds
    # finding's (in bounds, the two accesses never meet): either finding accounts for it.
    out.missed = [r.describe() for lines, r in observed.items()
                  if lines not in reported and not _consequence(r, reported)
                  and (lines in inside or lines not in outside)]
    return out


def _consequence(race, reported: set) -> bool:
    """Two writes of one store site with different values, where the static analysis reports a race
    of that store with another access: it counts stores of one value as benign on the assumption
    that loads of one address agree unless a write races with them, and that race is reported (the
    values here differ because of it: a load ran after another thread's store)."""
    one = race.first.access
    return (one is race.second.access and race.first.is_write and race.second.is_write
            and any(one.span.line in pair and len(pair) == 2 for pair in reported))


def fixture_outcomes(path: Path, args: list[str]) -> list[Outcome]:
    ns = build_parser().parse_args(["check", str(path), *args])
    text, lang, name = read_source(str(path), ns.lang)
    options = static_options()
    kernels, _ = text_kernels(text, lang, name, ns.block_dim, ns.grid_dim, dict(ns.define), options, str(path))
    return [compare(k, analyse_kernel(k, options)) for k in kernels]


def build_outcomes(builder: str, params: dict, target: str, defines: dict[str, int]) -> list[Outcome]:
    from analyzer.pipeline import built_kernels, check_built, with_builtin_contracts
    from analyzer.tvm.build import build

    mod = build(builder, params, target)
    kernels = built_kernels(mod)
    results = check_built(mod, with_builtin_contracts(static_options(), builder), kernels)
    return [compare(k, r, defines) for k, r in zip(kernels, results)]
