"""Barrier-deletion mutants: the emitted source with one barrier taken out, to measure recall.

Every barrier statement of a file becomes one mutant. In CUDA C and Metal the barrier call is
blanked up to its `;` (an empty statement remains, so every other line and column stays where it
was); in SPIR-V assembly the `OpControlBarrier` line becomes a comment. A mutant is analysed like
the original, and what it reports beyond the original says whether kernelrace sees the race the
deletion made, or whether the barrier was not needed (`redundant-barrier` should then say so).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from analyzer import ir
from analyzer.findings import KernelResult
from analyzer.frontend import lower_source
from analyzer.pipeline import Options, check_built, check_text
from analyzer.tvm.build import BuiltModule

# The rules whose findings are races: what a deleted barrier can expose.
RACE_RULES = ("write-after-read", "read-after-write", "write-after-write", "barrier-scope")


@dataclass
class Mutant:
    file: str               # the file of the module the barrier is in
    line: int
    col: int
    text: str               # the barrier's source text
    source: str             # the file without it


def barrier_sites(text: str, lang: str, filename: str) -> list[tuple[int, int, str]]:
    """(line, col, text) of every barrier statement in the file, in source order."""
    sites = {}
    for k in lower_source(text, lang, filename, frontend="auto"):   # read as `check` reads it
        for s in _barriers(k.body):
            sites[(s.span.line, s.span.col)] = s.text or ""
    return [(line, col, t) for (line, col), t in sorted(sites.items())]


def _barriers(stmts) -> Iterator[ir.Barrier]:
    for s in ir.walk_stmts(stmts, into_loops=True):
        if isinstance(s, ir.Barrier):
            yield s


def delete_barrier(text: str, lang: str, line: int, col: int) -> str:
    lines = text.split("\n")
    src = lines[line - 1]
    if lang == "spirv":
        lines[line - 1] = "; barrier deleted"
    else:
        start = col - 1
        value = next((n for n in _VALUE_BARRIERS if src.startswith(n, start)), None)
        if value is not None:
            # A barrier that is a value (`int c = __syncthreads_count(p);`): the call becomes a cast
            # of its argument, the same reads without the barrier, at the same columns.
            lines[line - 1] = src[:start] + "(int)".ljust(len(value)) + src[start + len(value):]
        else:
            end = src.index(";", start)
            lines[line - 1] = src[:start] + " " * (end - start) + src[end:]
    return "\n".join(lines)


_VALUE_BARRIERS = ("__syncthreads_count", "__syncthreads_and", "__syncthreads_or")


def mutants(files: list[tuple[str, str]], lang: str) -> Iterator[tuple[Mutant, list[tuple[str, str]]]]:
    """Each barrier of the files deleted in turn, with the files to check instead."""
    for i, (name, text) in enumerate(files):
        for line, col, bar in barrier_sites(text, lang, name):
            source = delete_barrier(text, lang, line, col)
            mutated = list(files)
            mutated[i] = (name, source)
            yield Mutant(name, line, col, bar, source), mutated


def built_checker(mod: BuiltModule) -> "Checker":
    """Checks a TVM build's files (or a mutant of them) with the build's launch extents and shapes."""
    def check(files: list[tuple[str, str]], options: Options) -> list[KernelResult]:
        if mod.units:
            return check_built(dataclasses.replace(mod, units=files), options)
        return check_built(dataclasses.replace(mod, source=files[0][1]), options)
    return check


def finding_keys(results: list[KernelResult], rules=RACE_RULES) -> set[tuple]:
    """What identifies a finding across mutants: rule, kernel and both access locations."""
    keys = set()
    for r in results:
        for f in r.findings:
            if f.rule in rules:
                first = (f.first.file, f.first.line, f.first.col) if f.first else None
                keys.add((f.rule, r.kernel, first, (f.second.file, f.second.line, f.second.col)))
    return keys


@dataclass
class MutantVerdict:
    mutant: Mutant
    new_races: int          # race findings the original does not have
    new_unknown: int        # pairs the analysis of the mutant could not decide
    redundant: bool         # the original's redundant-barrier note names this barrier
    seconds: float

    @property
    def outcome(self) -> str:
        if self.new_races:
            return "race"
        return "unknown" if self.new_unknown else "no race"


def text_checker(lang: str, block_dim=None, grid_dim=None, defines=None) -> "Checker":
    """Checks one kernel file's text (or a mutant of it) as `kernelrace check` would."""
    def check(files: list[tuple[str, str]], options: Options) -> list[KernelResult]:
        (name, text), = files
        return check_text(text, lang, name, block_dim, grid_dim, defines or {}, options)
    return check


Checker = Callable[[list[tuple[str, str]], Options], list[KernelResult]]


def check_mutants(files: list[tuple[str, str]], lang: str, check: Checker,
                  options: Options) -> tuple[list[KernelResult], list[MutantVerdict]]:
    """The original's results, and for each barrier what deleting it changes."""
    original = check(files, options)
    races = finding_keys(original)
    unknown = finding_keys(original, ("unknown",))
    notes = {(f.second.file, f.second.line, f.second.col) for r in original for f in r.findings
             if f.rule == "redundant-barrier"}
    quick = dataclasses.replace(options, select=RACE_RULES, hints="off")
    out = []
    for m, mutated in mutants(files, lang):
        t0 = time.perf_counter()
        results = check(mutated, quick)
        out.append(MutantVerdict(m, len(finding_keys(results) - races),
                                 len(finding_keys(results, ("unknown",)) - unknown),
                                 (m.file, m.line, m.col) in notes, time.perf_counter() - t0))
    return original, out
