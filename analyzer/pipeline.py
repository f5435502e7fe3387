"""Directs the passes: front end -> symbolic execution -> concurrency -> pairs -> rules."""

from __future__ import annotations

import dataclasses
import itertools
import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import z3

from analyzer import ir, messages
from analyzer.analysis.barriers import fixes
from analyzer.analysis.conditions.race_freedom import RaceFreedom, race_freedom
from analyzer.analysis.decision.memory_guard import DEFAULT_MB, KernelMemoryExceeded, MemoryGuard, checkpoint
from analyzer.analysis.decision.queries import QueryCache
from analyzer.analysis.decision.solver import INT_MAX, INT_MIN, fresh_context, own_context
from analyzer.analysis.execution.concurrency import Cfg, build_cfg
from analyzer.analysis.execution.events import Evaluation
from analyzer.analysis.execution.symbolic import SymbolicExecutor
from analyzer.analysis.interblock.grid import analyse_grid, block_dims_read, thread_dims_read
from analyzer.analysis.kernel import KernelAnalysis
from analyzer.analysis.pairing.hazards import PairAnalysis
from analyzer.analysis.pairing.races import analyse_pairs
from analyzer.analysis.stated import contracts as buffer_contracts
from analyzer.analysis.stated import assumptions as stated
from analyzer.command.cache import ResultCache, tvm_version
from analyzer.command.gc_pause import cycles_collected_after
from analyzer.errors import KernelraceError
from analyzer.findings import RACE_RULES, Finding, KernelResult, Location
from analyzer.frontend import spirv_tools, subgroups
from analyzer.frontend import lang_of, lower_source
from analyzer.frontend.preprocess import PreprocessOptions
from analyzer.tvm import sites
from analyzer.tvm.build import BuiltModule, build

DIMS = ("x", "y", "z")
# A kernel analysed with at most this many solver queries gets its fix hints re-checked by
# default (a count, not a clock: the same kernel gets the same hints on a loaded machine; TVM's
# racy scans take 70 to 130).
HINT_RECHECK_QUERIES = 400


@dataclass
class Options:
    strict: bool = False
    timeout_ms: int = 1_000
    select: tuple[str, ...] = ()     # rule names; empty means all
    kernel_timeout_s: float = 600.0  # wall-clock limit per kernel: pairs left after it are `unknown`
    kernel_memory_mb: int = DEFAULT_MB  # growth limit per kernel (analyzer/analysis/decision/memory_guard.py); 0: none
    hints: str = "auto"              # fix hints: "auto" (re-checked when the kernel is quick), "all", "off"
    explain: bool = False            # -v: name the pairs only a stated assumption keeps apart
    scope: str = "all"               # which thread pairs: "block" (one block), "grid" (two blocks), "all"
    contracts: tuple = ()            # buffer contracts (analysis/stated/contracts.py): --assume, configuration, built in
    no_contracts: bool = False       # --no-contracts: none in force; findings name those that would refute them
    conditions: bool = False         # --conditions: each kernel's race-freedom condition (race_freedom.py)
    include_dirs: tuple[str, ...] = ()               # check -I: where `#include "..."` looks
    macros: tuple[tuple[str, str], ...] = ()         # check -D NAME[=VALUE]
    forced_includes: tuple[str, ...] = ()            # check --include FILE (C family: read before the file)
    frontend: str = "auto"           # check --frontend: hand-written C-family files read by auto, clang or lark


SCOPES = ("block", "grid", "all")


def analyse_kernel(kernel: ir.Kernel, options: Options, target: str | None = None,
                   params: dict[str, Any] | None = None, cache: QueryCache | None = None,
                   detail: bool = True, lines: frozenset[int] | None = None,
                   prepared: tuple[Evaluation, Cfg] | None = None) -> KernelResult:
    """Findings of one kernel. `cache`, `detail`, `lines` and `prepared` are for re-analyses of fix
    hints: they share the first analysis's solver answers, need no classified witness, check only
    the pairs whose accesses sit on `lines` (the ones a hint's claim reads; see `analyse_pairs`),
    and, for the kernel itself, take its symbolic evaluation and CFG from the first analysis."""
    if cache is not None:
        return _analyse(kernel, options, target, params, cache, detail, lines, prepared)
    # A first analysis, not a fix hint's re-analysis (which shares its answers and context).
    t0 = time.perf_counter()
    fresh_context()
    guard = MemoryGuard(options.kernel_memory_mb)
    # No cyclic garbage collection while the kernel is analysed, one after: a collection frees
    # Z3 terms, whose ids Z3 then reuses, and that changes its models and the verdicts at the edge
    # of a budget. When collections run depends on everything the process did before; without
    # them a kernel gets the same results whatever ran before it. (Its cycles wait until it ends,
    # within the memory guard's limit. Everything the analysis made is then in the youngest
    # generation, so collecting that one frees its cycles without walking the whole heap again,
    # which took ~30 ms a kernel: more than many small kernels' analysis.)
    with cycles_collected_after():
        try:
            with guard:
                result = _analyse(kernel, options, target, params, QueryCache(), detail)
                checkpoint()    # finished past the limit: its last queries may have been interrupted
                return result
        except (KernelMemoryExceeded, z3.Z3Exception) as exc:
            if not guard.exceeded and not isinstance(exc, z3.Z3Exception):
                raise
            fresh_context()    # drop the context and its terms with the analysis
            where = Location(kernel.file, 1, 1, "kernel", text=kernel.line(1).strip())
            # A solver call that failed (no model, canceled) is a bug of ours, but what it leaves
            # is a kernel not checked, said as such: never an internal error, never clean.
            msg = (messages.OUT_OF_MEMORY.format(mb=options.kernel_memory_mb) if guard.exceeded
                   else messages.SOLVER_FAILED.format(reason=_z3_reason(exc)))
            finding = Finding("unknown", "warning", msg, kernel.name, kernel.file, where, None, None, target, params)
            return KernelResult(kernel.name, kernel.file, target, params, [finding], time.perf_counter() - t0,
                                stopped=True)


def _z3_reason(exc: Exception) -> str:
    value = getattr(exc, "value", exc)
    return value.decode(errors="replace") if isinstance(value, bytes) else str(value)


def _analyse(kernel: ir.Kernel, options: Options, target: str | None, params: dict[str, Any] | None,
             cache: QueryCache, detail: bool, lines: frozenset[int] | None = None,
             prepared: tuple[Evaluation, Cfg] | None = None) -> KernelResult:
    from rules import RULES

    if kernel.unsupported is not None:
        return _not_lowered(kernel, target, params)
    t0 = time.perf_counter()
    if prepared is None:
        evaluation = SymbolicExecutor(kernel).run()
        prepared = evaluation, build_cfg(kernel, evaluation.tracked_conditions)
    evaluation, cfg = prepared
    deadline = time.monotonic() + options.kernel_timeout_s
    applied = _contracts(kernel, evaluation, options)
    pairs = (analyse_pairs(kernel, evaluation, cfg, options.timeout_ms, options.strict, deadline=deadline,
                           cache=cache, detail=detail, contracts=[] if options.no_contracts else applied,
                           dormant=applied if options.no_contracts else [], lines=lines)
             if options.scope != "grid" else PairAnalysis())
    # Races between blocks (analysis/interblock/grid.py): global memory, every pair of instances. In a Z3
    # context of its own (solver.own_context), with a query cache of its own: a cache keys queries
    # by the ids of their terms, which only name a query within one context.
    grid = None
    if options.scope != "block":
        with own_context():
            grid = analyse_grid(kernel, evaluation, cfg, options.timeout_ms, options.strict, deadline=deadline,
                                cache=QueryCache(), detail=detail, contracts=[] if options.no_contracts else applied,
                                dormant=applied if options.no_contracts else [], explain=options.explain)
    analysis = KernelAnalysis(kernel, evaluation, pairs, options.strict, target, params, grid)
    findings: list[Finding] = []
    for name, rule in RULES.items():
        if options.select and name not in options.select:
            continue
        findings.extend(rule.check(analysis))
    between_blocks = [(u, " (threads of two blocks)") for u in (grid.undecided if grid is not None else [])]
    for u, who in [(u, "") for u in pairs.undecided] + between_blocks:
        loc = analysis.location(u.second)
        msg = messages.UNKNOWN.format(what=f"{u.first.access.kind} and {u.second.access.kind}{who}",
                                      l1=analysis.user_line(u.first.access.span),
                                      l2=analysis.user_line(u.second.access.span),
                                      buf=u.second.access.buffer, reason=u.reason)
        findings.append(analysis.finding("unknown", "warning", msg, loc, analysis.location(u.first)))
    findings = _dedupe(sorted(findings, key=Finding.sort_key))
    if options.hints != "off":
        # Each hint is checked on a copy of the kernel (the re-analysis proposes nothing itself),
        # unless the kernel is slow to analyse and the user did not ask for every hint re-checked.
        # Whether a hint works is read off the re-analysis's race findings and new errors only: a
        # rule that reports at most warnings or notes (barrier scope, a redundant barrier) cannot
        # tell, and the re-analysis skips it (the race rules report errors).
        # Barrier hints are about one block: their re-analyses leave the blocks' pairs out.
        quiet = dataclasses.replace(options, hints="off", scope="block", select=tuple(
            n for n, r in RULES.items() if r.severity == "error" and (not options.select or n in options.select)))
        strict = dataclasses.replace(quiet, strict=True)
        # A race seen in a run (observed.py) stands for queries that spent their whole budget:
        # the re-analyses would spend it again, on each hint.
        recheck = (options.hints == "all" or (
            pairs.queries + (grid.queries if grid is not None else 0) <= HINT_RECHECK_QUERIES
            and not any(h.observed is not None for h in pairs.hazards))) \
            and time.monotonic() < deadline
        strict_results: dict[tuple, tuple] = {}   # (id(kernel), lines) -> (kernel, result): each once

        def left(o: Options) -> Options:
            # A re-analysis spends what is left of the kernel's time, not a time limit of its own
            # (a random kernel's two hints took four times --kernel-timeout).
            return dataclasses.replace(o, kernel_timeout_s=max(0.0, deadline - time.monotonic()))

        # Re-analyses check only the pairs on the lines a hint's claim reads (see fixes.suggest).
        # Every finding asks about the kernel itself: once for all, on all their lines.
        hinted = [f for f in findings if f.severity == "error" and not (f.witness and "second_block" in f.witness)]
        hint_lines = frozenset(line for f in hinted if f.rule in RACE_RULES and f.first is not None
                               for line in (f.first.line, f.second.line))
        shared = fixes.shared_lines(kernel, hinted)

        def analyse_strict(k: ir.Kernel, lines: frozenset[int] | None = None) -> KernelResult:
            if k is kernel and lines is not None:
                lines = lines | hint_lines
            if (id(k), lines) not in strict_results:
                # The kernel itself again: its evaluation and CFG (read only) are this analysis's.
                same = (evaluation, cfg) if k is kernel else None
                strict_results[id(k), lines] = (k, analyse_kernel(k, left(strict), target, params, cache,
                                                                    detail=False, lines=lines, prepared=same))
            return strict_results[id(k), lines][1]

        tried: dict = {}   # one re-analysis per change, however many findings propose it
        for f in findings:
            if f.witness and "second_block" in f.witness:
                # Between blocks no barrier helps: an atomic or another layout (not re-checked).
                f.fix = fixes.grid_hint(kernel, f).as_dict() if f.rule in RACE_RULES else None
            elif f.severity == "error":
                fix = fixes.suggest(kernel, f, lambda k, on: analyse_kernel(k, left(quiet), target, params, cache,
                                                                            detail=False, lines=on),
                                    analyse_strict, recheck, tried, shared.get(id(f)))
                f.fix = fix.as_dict() if fix is not None else None
    assumed = []
    if options.explain and pairs.checker:
        assumed = pairs.checker.rests_on_bounds(pairs) + pairs.checker.rests_on_contracts(pairs)
    if grid is not None:
        assumed += grid.assumed
    shown = [{"contract": str(c), "origin": c.origin, "in_force": not options.no_contracts} for c, _ in applied]
    return KernelResult(kernel.name, kernel.file, target, params, findings,
                        time.perf_counter() - t0, pairs.queries + (grid.queries if grid is not None else 0), assumed,
                        contracts=shown, assumptions=launch_assumptions(kernel, grid is not None),
                        race_free_when=_race_free_when(findings) if options.conditions else None)


def _race_free_when(findings: list[Finding]) -> str:
    """The kernel's race-freedom condition, as `check --conditions` prints it."""
    other = next((f for f in findings if f.condition is None and f.severity != "note"), None)
    if other is not None:
        return RaceFreedom(f"the {other.rule} finding at line {other.second.line} has no condition",
                           False, False).phrase()
    return race_freedom([(*(f.condition_sets or (None, None)), f.condition_kind == "exact")
                         for f in findings if f.condition is not None]).phrase()


def launch_assumptions(kernel: ir.Kernel, grid: bool) -> list[str]:
    """What the analysis of a kernel took as given beyond its launch: the extents set to 1 because
    the kernel never reads them, the source's launch bounds, and the user's assumptions."""
    out = [f"{d} = 1, never read" for d in kernel.defaulted_dims]
    if kernel.host_launch is not None:
        line, block, grid = kernel.host_launch
        if tuple(kernel.block_dim.get(d) for d in DIMS) == tuple(block):
            out.insert(0, f"launch from host line {line}: blockDim = ({','.join(map(str, block))})" + (
                f", gridDim = ({','.join(map(str, grid))})"
                if grid is not None and tuple(kernel.grid_dim.get(d) for d in DIMS) == tuple(grid) else ""))
    if grid:
        read = block_dims_read(kernel)
        out += [f"gridDim.{d} = 1, never read" for d in DIMS if d not in read and kernel.grid_dim.get(d) is None]
    if kernel.max_threads_per_block is not None and not all(isinstance(kernel.block_dim.get(d), int) for d in DIMS):
        out.append(f"blockDim.x * blockDim.y * blockDim.z <= {kernel.max_threads_per_block}, from the source")
    out += [text for text, _ in kernel.assumptions]
    said = subgroups.assumption(kernel)
    return out + [said] if said else out


def _not_lowered(kernel: ir.Kernel, target, params) -> KernelResult:
    """A kernel of a file whose other kernels were analysed, itself using a construct the front end
    does not model: one `unknown` finding naming the construct and where it is."""
    span, what = kernel.unsupported
    loc = Location(span.file, span.line, span.col, "construct", text=kernel.line(span.line).strip())
    msg = f"kernel {kernel.name} not analysed: unsupported construct: {what}"
    return KernelResult(kernel.name, kernel.file, target, params,
                        [Finding("unknown", "warning", msg, kernel.name, kernel.file, loc, None, None, target, params)])


_PLACE = re.compile(r"^(?P<file>[^:]+):(?P<line>\d+):(?:(?P<col>\d+):)?")


def not_analysed(where: str, message: str, target: str | None = None, params=None) -> KernelResult:
    """A file or build of a run that went on without it (bad input, a worker that died): one
    `unknown` finding with the one-line reason, at the place the reason names, if any."""
    m = _PLACE.match(message)
    file, line, col = (m["file"], int(m["line"]), int(m["col"] or 1)) if m else (where, 1, 1)
    reason = message[m.end():].strip() if m else message.removeprefix(f"{where}: ")
    loc = Location(file, line, col, "file")
    return KernelResult("", where, target, params,
                        [Finding("unknown", "warning", f"not analysed: {reason}", "", file, loc, None, None,
                                 target, params)])


def _contracts(kernel: ir.Kernel, evaluation, options: Options) -> list:
    """The (contract, buffer) pairs that apply to the kernel. A contract on a buffer the kernel
    writes describes nothing the kernel reads from its input: stated by the user, it is an error;
    built in, it does not apply."""
    contracts = [c for c in options.contracts if not isinstance(c, stated.Assumption)]
    applied, misused = buffer_contracts.in_force(contracts, kernel, evaluation)
    for c, name in misused:
        if not c.origin.startswith("built in"):
            raise KernelraceError(f"{kernel.file}: {c.origin} {c}: kernel {kernel.name} writes {name}; a "
                                  f"contract describes a buffer the kernel only reads")
    return applied


def _dedupe(findings: list[Finding]) -> list[Finding]:
    """One finding per rule and pair of source lines (an out-of-bounds one per line): the lanes of a vector access, or the four
    reads of one `make_float4(...)`, are one problem to the reader. Of several, the first whose
    witness replayed (a site against itself may collide in two orders and in one iteration, and
    only some of those queries find a witness that runs)."""
    chosen: dict = {}
    for f in findings:
        key = (f.rule, f.kernel, f.second.line, f.first.line if f.first else None,
               bool(f.witness and "second_block" in f.witness))   # a block's race and the grid's are two
        if f.rule == "out-of-bounds":   # one per line that leaves the bounds (a vector's lanes too)
            key = (f.rule, f.kernel, f.second.line)
        if key not in chosen or ((chosen[key].witness or {}).get("replayed") is False
                                 and (f.witness or {}).get("replayed") is not False):
            chosen[key] = f
    return list(chosen.values())


def _apply_dims(kernel: ir.Kernel, block_dim, grid_dim, defines) -> None:
    for d, v in zip(DIMS, block_dim or ()):
        kernel.block_dim[d] = v
    if block_dim:
        for d in DIMS[len(block_dim):]:
            kernel.block_dim[d] = 1
    else:
        for d in DIMS:
            kernel.block_dim.setdefault(d, None)
        # A block dimension the kernel never reads is 1, as an unread grid dimension is (said in
        # the output; --block-dim undoes it).
        read = thread_dims_read(kernel)
        kernel.defaulted_dims = tuple(f"blockDim.{d}" for d in DIMS if d not in read and kernel.block_dim[d] is None)
        for d in DIMS:
            if d not in read and kernel.block_dim[d] is None:
                kernel.block_dim[d] = 1
    for d, v in zip(DIMS, grid_dim or ()):
        kernel.grid_dim[d] = v
    if grid_dim:
        for d in DIMS[len(grid_dim):]:
            kernel.grid_dim[d] = 1
    kernel.bindings.update(defines or {})
    wrong = subgroups.bind_size(kernel)
    if wrong:
        raise KernelraceError(f"{kernel.file}: {wrong}")


def check_file(path: str, lang: str | None, block_dim, grid_dim, defines: dict[str, int],
               options: Options, cache: ResultCache | None = None) -> list[KernelResult]:
    """Check one kernel file; with `cache`, a file whose text (after disassembly), dimensions,
    defines and options were analysed before is not analysed again."""
    text, lang, name = read_source(path, lang, _pp(options))
    if cache is None:
        return check_text(text, lang, name, block_dim, grid_dim, defines, options, path)
    return cache.through("check", (text, lang, name, path, block_dim, grid_dim, defines, options),
                         lambda: check_text(text, lang, name, block_dim, grid_dim, defines, options, path),
                         options.kernel_timeout_s)


def _pp(options: Options) -> PreprocessOptions:
    return PreprocessOptions(options.include_dirs, options.macros, options.forced_includes)


def read_source(path: str, lang: str | None, pp: PreprocessOptions | None = None) -> tuple[str, str, str]:
    """(text, dialect, file name positions refer to) of a kernel file; SPIR-V binaries and GLSL are
    disassembled (GLSL compiled with `pp`'s -I and -D), and positions are the disassembly's lines."""
    p = Path(path)
    lang = lang or lang_of(path)
    if lang is None:
        if not p.exists():
            # A mistyped directory (no extension to go by) is missing, not in an unknown language.
            raise KernelraceError(f"{path}: no such file or directory")
        raise KernelraceError(f"{path}: unknown language (use --lang cuda|metal|opencl|spirv|wgsl, or a "
                              f".cu/.cuh/.metal/.cl/.spvasm/.spv/.comp/.wgsl file)")
    try:
        data = p.read_bytes()
    except FileNotFoundError:
        raise KernelraceError(f"{path}: no such file") from None
    except OSError as exc:
        raise KernelraceError(f"{path}: cannot read: {exc}") from None
    return source_from(data, path, lang, pp)


def source_from(data: bytes, path: str, lang: str, pp: PreprocessOptions | None = None) -> tuple[str, str, str]:
    """`read_source` of a file's bytes (`check -`: standard input, named `path`)."""
    if lang == "spirv":
        pp = pp or PreprocessOptions()
        return spirv_tools.spirv_text(data, path, pp.include_dirs, pp.macros), lang, (f"{path}.spvasm" if Path(path).suffix in (".spv", ".comp", ".glsl")
                                                          else path)
    try:
        return data.decode("utf-8").replace("\r\n", "\n").replace("\r", "\n"), lang, path   # as read_text()
    except UnicodeDecodeError as exc:
        raise KernelraceError(f"{path}: cannot read: {exc}") from None


def check_text(text: str, lang: str, name: str, block_dim, grid_dim, defines: dict[str, int],
               options: Options, path: str | None = None) -> list[KernelResult]:
    """Check a kernel source; `path` is the file the user named (for messages)."""
    args = file_args(text, path or name) if not (block_dim or grid_dim) else None
    if args is not None:
        block_dim, grid_dim, file_defines, scope, said_args = args
        defines = {**file_defines, **(defines or {})}
        if scope and options.scope == "all":
            options = dataclasses.replace(options, scope=scope)
    kernels, said = text_kernels(text, lang, name, block_dim, grid_dim, defines, options, path)
    if args is not None:
        said = said_args
    results = []
    for kernel in kernels:
        result = analyse_kernel(kernel, options)
        result.launch_from_file = said
        results.append(result)
    return results


def text_kernels(text: str, lang: str, name: str, block_dim, grid_dim, defines: dict[str, int],
                 options: Options, path: str | None = None) -> tuple[list[ir.Kernel], str]:
    """The IR of a kernel source's kernels with their launch extents and defines applied, and the
    launch comment that gave the extents (empty when none did)."""
    path = path or name
    kernels = _lowered(text, lang, name, _pp(options), options.frontend)
    # the shader fixes its workgroup size (@workgroup_size, LocalSize, reqd_work_group_size)
    if lang in ("spirv", "wgsl", "opencl"):
        for k in kernels:
            _check_local_size(k, block_dim, path)
    known = {p for k in kernels for p in k.params}
    for param in defines or {}:
        if param not in known:
            raise KernelraceError(f"{path}: --scalar {param}: no kernel in this file has a scalar parameter "
                                  f"'{param}' (parameters: {', '.join(sorted(known)) or 'none'})")
    # Stated assumptions: --assume's expressions and the source's `// kernelrace: assume` lines.
    try:
        said_here = stated.in_source(text.splitlines(), path)
    except ValueError as exc:
        raise KernelraceError(str(exc)) from None
    for kernel in kernels:
        stated.apply(kernel, [a for a in options.contracts if isinstance(a, stated.Assumption)] + said_here)
    launch = launch_comment(text) if lang != "spirv" and not (block_dim or grid_dim) else None
    said = ""
    if launch is not None:
        block_dim, grid_dim, said = launch
    for kernel in kernels:
        _apply_dims(kernel, block_dim, grid_dim, defines)
    return kernels, said


_ARGS_LINE = re.compile(r"^\s*//\s*kernelrace-args:(?P<args>.*)$")


def file_args(text: str, path: str):
    """(block extents, grid extents, defines, scope, the line) from a first line
    `// kernelrace-args: --block-dim 16,16 --grid-dim 4,4 --scalar n=64 --scope block`, the launch
    a file states for itself; None without one. Used only when neither --block-dim nor --grid-dim
    is given."""
    import shlex

    first = text.split("\n", 1)[0]
    m = _ARGS_LINE.match(first)
    if not m:
        return None
    try:
        words = shlex.split(m.group("args"))
    except ValueError as exc:
        raise KernelraceError(f"{path}:1: kernelrace-args: {exc}") from None
    block = grid = None
    defines: dict[str, int] = {}
    scope = None
    it = iter(words)
    try:
        for w in it:
            if w in ("--block-dim", "--grid-dim"):
                dims = tuple(int(v) for v in next(it).split(","))
                if not 1 <= len(dims) <= 3 or min(dims) < 1:
                    raise ValueError(w)
                block, grid = (dims, grid) if w == "--block-dim" else (block, dims)
            elif w in ("--scalar", "--define"):   # --define: --scalar's old name
                k, _, v = next(it).partition("=")
                defines[k] = int(v, 0)
            elif w == "--scope":
                scope = next(it)
                if scope not in SCOPES:
                    raise ValueError(w)
    except (StopIteration, ValueError):
        raise KernelraceError(f"{path}:1: kernelrace-args: expected --block-dim X[,Y[,Z]], --grid-dim "
                              f"X[,Y[,Z]], --scalar NAME=INT or --scope block|grid|all") from None
    return block, grid, defines, scope, "kernelrace-args:" + m.group("args")


# The launch comment kernels written for earlier GPU verifiers carry on their first lines:
# `//--blockDim=64 --gridDim=[4,2]` (one number, or [X,Y] / [X,Y,Z]).
_LAUNCH_LINE = re.compile(r"^\s*//\s*(--(?:blockDim|gridDim)=.*)$")
_LAUNCH_DIM = re.compile(r"--(blockDim|gridDim)=(\[[\d\s,]+\]|\d+)")


def launch_comment(text: str) -> tuple[tuple[int, ...] | None, tuple[int, ...] | None, str] | None:
    """(block extents, grid extents, the comment) from a leading `//--blockDim=... --gridDim=...`
    comment among the file's first lines, or None. Used only when neither --block-dim nor
    --grid-dim is given."""
    for line in text.split("\n", 10)[:10]:
        m = _LAUNCH_LINE.match(line)
        if not m:
            continue
        found = {}
        for key, value in _LAUNCH_DIM.findall(m.group(1)):
            dims = tuple(int(v) for v in value.strip("[]").replace(" ", "").split(",") if v)
            if not 1 <= len(dims) <= 3 or any(d < 1 for d in dims):
                return None
            found[key] = dims
        if found:
            return found.get("blockDim"), found.get("gridDim"), m.group(1).strip()
    return None


def _check_local_size(kernel: ir.Kernel, block_dim, path: str) -> None:
    """A shader's LocalSize is its block size: --block-dim may fill it in, not contradict it."""
    if not block_dim:
        return
    given = dict(zip(DIMS, list(block_dim) + [1] * (3 - len(block_dim))))
    for d in DIMS:
        have = kernel.block_dim.get(d)
        if have is not None and have != given[d]:
            size = "reqd_work_group_size" if kernel.lang == "opencl" else "LocalSize"
            raise KernelraceError(f"{path}: --block-dim {','.join(map(str, block_dim))} contradicts the shader's "
                                  f"{size} {kernel.block_dim.get('x')} {kernel.block_dim.get('y')} "
                                  f"{kernel.block_dim.get('z')}")


def _extent_dims(extents: dict[str, int | str], prefix: str) -> dict[str, int | None]:
    out: dict[str, int | None] = {}
    for d in DIMS:
        v = extents.get(f"{prefix}.{d}", 1)
        out[d] = v if isinstance(v, int) else None
    return out


def _lowered(text: str, lang: str, filename: str, pp: PreprocessOptions | None = None,
             frontend: str = "lark") -> list[ir.Kernel]:
    """`lower_source`, with the cycle collector paused: millions of short-lived objects, beside
    the heap of a process that built with TVM (gc_pause.py). TVM's emitted source is always read by
    Lark (`frontend` is check's choice for hand-written files)."""
    with cycles_collected_after():
        return lower_source(text, lang, filename, pp, frontend)


def built_kernels(mod: BuiltModule) -> list[ir.Kernel]:
    """The IR of every kernel of a build, with its launch extents, buffer shapes and the host's
    parameter bindings."""
    kernels = []
    for filename, text in mod.files():
        for k in _lowered(text, mod.lang, filename):
            if mod.units and k.name == "main":   # a GLSL shader's entry point: name it after the TVM kernel
                k.name = Path(filename).stem
            kernels.append(k)
    by_name = {k.name: k for k in mod.kernels}
    for kernel in kernels:
        built = by_name.get(kernel.name)
        if built is not None:
            kernel.block_dim = _extent_dims(built.extents, "threadIdx")
            kernel.grid_dim = _extent_dims(built.extents, "blockIdx")
            kernel.grid_params = {d: v for d in DIMS if isinstance(v := built.extents.get(f"blockIdx.{d}"), str)}
        else:
            _apply_dims(kernel, None, None, None)
        _apply_shapes(kernel, mod.buffers)
        kernel.definitions = dict(mod.definitions.get(kernel.name, mod.definitions.get("*", {})))
    return kernels


def check_built(mod: BuiltModule, options: Options, kernels: list[ir.Kernel] | None = None) -> list[KernelResult]:
    results = []
    said = [a for a in options.contracts if isinstance(a, stated.Assumption)]
    for kernel in kernels if kernels is not None else built_kernels(mod):
        stated.apply(kernel, said)     # --assume's expressions over the kernel's parameters
        result = analyse_kernel(kernel, options, mod.target, mod.params)
        if mod.provenance:
            for f in result.findings:
                f.notes.append(mod.provenance)
        results.append(result)
    sites.locate(results, mod)
    return results


def build_and_check(builder: str, params: dict[str, Any], target: str, options: Options,
                    want_sources: bool = False, cache: ResultCache | None = None
                    ) -> tuple[list[KernelResult], float, dict[str, str] | None]:
    """One build and its kernels checked: (results, TVM's build seconds, the analysed sources under
    the names findings carry, when asked for). A unit of work of `lint`, `llm` and the configured
    run, run in a worker process with --jobs. With `cache`, the build still runs (it makes the
    source), but a module built before to the same sources and metadata is not analysed again."""
    t0 = time.perf_counter()
    mod = build(builder, params, target)
    seconds = time.perf_counter() - t0
    results, sources = check_module(mod, with_builtin_contracts(options, builder, params), want_sources, cache)
    return results, seconds, sources


def check_module(mod: BuiltModule, options: Options, want_sources: bool = False,
                 cache: ResultCache | None = None) -> tuple[list[KernelResult], dict[str, str] | None]:
    """A build's kernels checked, through the result cache when there is one (a module built before
    to the same sources and metadata is not analysed again), and its analysed sources when asked."""
    if cache is None:
        results = check_built(mod, options)
    else:
        # Everything check_built reads of the module, and TVM's version (its codegen made the source).
        inputs = (tvm_version(), mod.target, mod.lang, mod.params, mod.files(), bool(mod.units), mod.kernels,
                  mod.buffers, mod.definitions, mod.provenance, options)
        results = cache.through("built", inputs, lambda: check_built(mod, options), options.kernel_timeout_s)
        sites.locate(results, mod)
    if not want_sources:
        return results, None
    from analyzer.report.sarif import built_sources
    return results, built_sources(mod)


def _apply_shapes(kernel: ir.Kernel, shapes) -> None:
    for name, buf in kernel.buffers.items():
        if name not in shapes:
            continue
        shape, offset_param = shapes[name]
        if name.endswith("_ptr") and name[:-4] in shapes:
            buf.display = name[:-4]
        strides, acc, row = [], 1, None
        for extent in reversed(shape[1:]):
            if not isinstance(extent, int):
                # The innermost symbolic extent: a row of `extent * acc` elements, when the
                # extent is a parameter the kernel receives.
                if isinstance(extent, str) and extent in kernel.params:
                    row = (extent, acc)
                break
            acc *= extent
            if acc > 1:
                strides.append(acc)
        buf.strides = tuple(strides)
        buf.param_row = row
        buf.offset_param = offset_param
        buf.extent_params = frozenset(e for e in shape if isinstance(e, str) and e in kernel.params)
        # A tensor's extents and its element offset are never negative: TVM's host code binds
        # these parameters from the DLTensor's `shape` entries (extents) and its `byte_offset`
        # (a uint64_t) divided by the element size. Without it a model could take
        # `total_copy_length = -2**31` and send a load far outside every buffer it names.
        for name in sorted(buf.extent_params | ({offset_param} & set(kernel.params))):
            lo, hi = kernel.param_ranges.get(name, (INT_MIN, INT_MAX))
            kernel.param_ranges[name] = (max(lo, 0), hi)
        last = shape[-1] if len(shape) > 1 else None
        # A symbolic last extent the kernel does not receive as a parameter: no row known.
        buf.last_extent = last if isinstance(last, int) or last in kernel.params else None
        if len(shape) > 1 and buf.last_extent is None:
            buf.last_extent = "?"
        buf.declared = buf.host_shape = True


def param_grid(params: dict[str, list[Any]]) -> list[dict[str, Any]]:
    names = list(params)
    return [dict(zip(names, combo)) for combo in itertools.product(*(params[n] for n in names))]


@dataclass
class LintJob:
    builder: str
    target: str
    params: dict[str, Any]


def lint_jobs(builder: str, targets: list[str], params: dict[str, list[Any]]) -> list[LintJob]:
    return [LintJob(builder, t, p) for p in param_grid(params) for t in targets]


def run_lint_job(job: LintJob, options: Options) -> tuple[list[KernelResult], float]:
    t0 = time.perf_counter()
    mod = build(job.builder, job.params, job.target)
    build_seconds = time.perf_counter() - t0
    return check_built(mod, with_builtin_contracts(options, job.builder, job.params)), build_seconds


def with_builtin_contracts(options: Options, builder: str, params: dict[str, Any] | None = None) -> Options:
    """The options with the contracts TVM's runtime guarantees for this builder's kernels
    (analyzer/tvm/corpus.py, docs/contracts.md); --no-contracts keeps them only to name them. A
    contract stated in the builder's parameters (`{page_size}`) is left out without them."""
    from analyzer.tvm.corpus import BUILTIN_CONTRACTS

    builtin = []
    for buf, prop, why in BUILTIN_CONTRACTS.get(builder, ()):
        try:
            builtin.append(buffer_contracts.parse(f"{buf}:{prop.format(**(params or {}))}", f"built in ({why})"))
        except (KeyError, IndexError, ValueError):
            continue    # a parameter missing, or not a number (a symbolic page_size): nothing to state
    return dataclasses.replace(options, contracts=options.contracts + tuple(builtin)) if builtin else options
