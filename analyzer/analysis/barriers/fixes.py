"""Fix hints for race findings, each checked by re-analysing the kernel with the fix applied.

A hint places a block barrier between the two accesses: right before the statement holding the
second access when both sit in one statement list, or after the statement holding the first one
when the race crosses a loop iteration. When the second access is a write every thread of a
dimension repeats, the hint also lets one thread do it (the upstream fix of TVM's merge-state
race). Candidates are applied to a copy of the IR and the kernel is analysed again: the hint says
whether the finding goes away, without bringing a new error.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

from analyzer import ir
from analyzer.findings import RACE_RULES

DIMS = ("x", "y", "z")

# How each dialect spells a barrier ordering both memories, and a thread index.
BARRIER_TEXT = {
    "cuda": "__syncthreads();",
    "metal": "threadgroup_barrier(mem_flags::mem_device | mem_flags::mem_threadgroup);",
    "spirv": "memoryBarrierBuffer(); barrier();",
    "wgsl": "storageBarrier(); workgroupBarrier();",
    "opencl": "barrier(CLK_GLOBAL_MEM_FENCE | CLK_LOCAL_MEM_FENCE);",
}
THREAD_TEXT = {"cuda": "threadIdx.{d}", "metal": "thread_position_in_threadgroup.{d}",
               "spirv": "gl_LocalInvocationID.{d}", "wgsl": "local_invocation_id.{d}",
               "opencl": "get_local_id({n})"}


@dataclass
class Fix:
    text: str                       # what to change, in the kernel's source language
    line: int                       # the source line the change goes before (or after, see text)
    removes: bool | None            # the re-analysis with the change applied no longer reports it
                                    # (None: not re-checked)
    tir: str = ""                   # the same change in TIR terms, for TVM builds
    notes: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {"text": self.text, "line": self.line, "removes": self.removes, "tir": self.tir,
                "notes": list(self.notes)}


def _reads(e, seen: set | None = None):
    """The accesses read in `e`; with `seen`, each shared subterm once (see ir.accesses)."""
    seen = set() if seen is None else seen
    stack = [e]
    while stack:
        e = stack.pop()
        if id(e) in seen:
            continue
        seen.add(id(e))
        if isinstance(e, ir.Read):
            yield e.access
            stack.append(e.access.offset)
        else:
            stack.extend(reversed(ir.operands(e)))


def _own_accesses(s):
    """The accesses statement `s` itself performs (not those of a nested block)."""
    if isinstance(s, ir.MemOp):
        yield s.access
        exprs = (s.access.offset, s.access.value)
    else:
        exprs = (getattr(s, "value", None), getattr(s, "cond", None))
    seen: set[int] = set()
    for e in exprs:
        if e is not None:
            yield from _reads(e, seen)


def _holds(s, acc: ir.Access) -> bool:
    return any(x is acc for x in _own_accesses(s))


def _access_where(stmts: list, match) -> ir.Access | None:
    """The first access of the statements (nested ones included) that `match` accepts."""
    for s in stmts:
        for acc in _own_accesses(s):
            if match(acc):
                return acc
        for lst in _children(s):
            found = _access_where(lst, match)
            if found is not None:
                return found
    return None


def _children(s) -> list[list]:
    if isinstance(s, ir.If):
        return [s.then, s.orelse]
    if isinstance(s, ir.Loop):
        return [s.init, s.body, s.update]
    return []


def _path(stmts: list, acc: ir.Access) -> list[tuple[list, int]] | None:
    for i, s in enumerate(stmts):
        if _holds(s, acc):
            return [(stmts, i)]
        for lst in _children(s):
            p = _path(lst, acc)
            if p is not None:
                return [(stmts, i)] + p
    return None


def _find(kernel: ir.Kernel, line: int, col: int, kind: str) -> ir.Access | None:
    return _sites(kernel).get((line, col, kind))


@ir.per_kernel
def _sites(kernel: ir.Kernel) -> dict:
    """The kernel's sites by (line, col, kind), each the first `_access_where` would meet: one walk
    for all of a kernel's findings, not one per finding (changes go to copies, see `_copy`)."""
    index: dict = {}
    _index_sites(kernel.body, index)
    return index


def _index_sites(stmts: list, index: dict) -> None:
    """In `_access_where`'s order: a statement's own accesses, then its nested lists."""
    for s in stmts:
        for acc in _own_accesses(s):
            index.setdefault((acc.span.line, acc.span.col, "atomic" if acc.atomic else acc.kind), acc)
        for lst in _children(s):
            _index_sites(lst, index)


def shared_lines(kernel: ir.Kernel, findings) -> dict[int, frozenset[int]]:
    """id(finding) -> the lines its hint's re-analyses check: its own two, and those of every race
    finding whose barrier goes in the same place, so that the findings proposing one change share
    its re-analysis (`suggest`'s `lines`)."""
    groups: dict = {}
    key_of: dict[int, object] = {}
    for f in findings:
        if f.rule not in RACE_RULES or f.first is None:
            continue
        a = _find(kernel, f.first.line, f.first.col, f.first.kind)
        b = _find(kernel, f.second.line, f.second.col, f.second.kind)
        placed = _placement(kernel, a, b) if a is not None and b is not None else None
        key = (id(placed[0][placed[2]][0]), placed[3]) if placed is not None and placed[3] is not None else id(f)
        groups[key] = groups.get(key, frozenset()) | {f.first.line, f.second.line}
        key_of[id(f)] = key
    return {fid: groups[key] for fid, key in key_of.items()}


def suggest(kernel: ir.Kernel, finding, reanalyse, reanalyse_strict=None, recheck: bool = True,
            tried: dict | None = None, lines: frozenset[int] | None = None) -> Fix | None:
    """A checked fix hint for a race finding, or None when no barrier placement applies
    (the two accesses sit in one statement, or in two arms of one branch). `tried` keeps the
    re-analyses of one kernel's changes: the findings of one loop often propose the same one.
    `reanalyse(kernel, lines)` and `reanalyse_strict(kernel, lines)` check only the pairs whose
    two accesses sit on `lines`: a claim reads the race findings of the finding's two lines (or
    of the store's line with itself), and the errors of other rules, which come from no pair.
    `lines` adds the lines of the findings that share its re-analyses (`shared_lines`)."""
    tried = {} if tried is None else tried
    if finding.rule not in RACE_RULES or finding.first is None:
        return None
    a = _find(kernel, finding.first.line, finding.first.col, finding.first.kind)
    b = _find(kernel, finding.second.line, finding.second.col, finding.second.kind)
    if a is None or b is None:
        return None
    placed = _placement(kernel, a, b)
    if placed is None:
        return None
    pa, pb, k, where = placed
    lines = frozenset({finding.first.line, finding.second.line}) | (lines or frozenset())
    candidates = [("barrier", where, None)] if where is not None else []
    dims = _repeating_dims(finding, kernel)
    # Letting one thread write is a fix only for a store every thread repeats with the same value.
    if b.is_write and dims and reanalyse_strict is not None and recheck \
            and _repeated_write(reanalyse_strict(kernel, lines), finding.second.line):
        if where is not None:
            candidates.append(("barrier+guard", where, dims[0]))
        candidates.append(("guard", None, dims[0]))
    lang = kernel.lang
    if not recheck:
        if not candidates:
            return None
        what, index, dim = candidates[0]
        fix = _describe(kernel, lang, what, index, dim, pa[k][0], pb, k, None)
        fix.notes.append("not re-checked: the kernel takes too long to analyse again (--hints=all re-checks it)")
        return fix
    undecided = None
    for what, index, dim in candidates:
        # The change is its place in the original kernel: which list, where, which store guarded.
        key = (id(pa[k][0]) if index is not None else None, index,
               id(pb[-1][0][pb[-1][1]]) if dim is not None else None, dim, lines)
        if dim is not None:
            # The guard's claim, checked where it applies: with the barrier (if any) in place,
            # every collision left of the store with itself writes one value.
            base = kernel if index is None else _changed(kernel, a, b, k, pb, index, None)
            if not _same_value_only(reanalyse_strict(base, lines), finding.second.line):
                continue
        if key in tried:
            fixed, result = tried[key]
        else:
            fixed, result = _reanalysed(kernel, a, b, k, pb, index, dim, reanalyse, lines)
            tried[key] = fixed, result
        removed = not any(f.rule == finding.rule and f.first is not None
                          and (f.first.line, f.second.line) == (finding.first.line, finding.second.line)
                          for f in result.findings)
        new_errors = [f for f in result.findings if f.severity == "error" and f.rule not in RACE_RULES]
        if removed and any(f.rule == "unknown" for f in result.findings):
            # A pair the re-analysis left undecided (its budget, the kernel's time) may be this one:
            # no claim either way.
            undecided = undecided or (what, index, dim)
            continue
        if not removed or new_errors:
            continue
        if what == "barrier" and len(candidates) > 1 and reanalyse_strict is not None \
                and _same_value_only(reanalyse_strict(fixed, lines), finding.second.line):
            continue   # every thread stores the same value: the hint should let one thread do it
        return _describe(kernel, lang, what, index, dim, pa[k][0], pb, k, True)
    if not candidates:
        return None
    if undecided is not None:
        what, index, dim = undecided
        fix = _describe(kernel, lang, what, index, dim, pa[k][0], pb, k, None)
        fix.notes.append("not re-checked: the re-analysis with the change left pairs undecided")
        return fix
    what, index, dim = candidates[0]
    return _describe(kernel, lang, what, index, dim, pa[k][0], pb, k, False)


def _placement(kernel: ir.Kernel, a: ir.Access, b: ir.Access):
    """(path to a, path to b, depth of the statement list the barrier goes in, its index there),
    the index None when no barrier placement applies; None when an access is not found."""
    pa, pb = _path(kernel.body, a), _path(kernel.body, b)
    if pa is None or pb is None:
        return None
    k = 0
    while k < min(len(pa), len(pb)) - 1 and pa[k][0] is pb[k][0] and pa[k][1] == pb[k][1]:
        k += 1
    same_list = pa[k][0] is pb[k][0]
    ia, ib = pa[k][1], pb[k][1]
    where = None
    if same_list and ia != ib:
        # Before the second access's statement, or after the first's when the race is carried
        # around a loop (the second access comes first in the body).
        where = ib if ia < ib else ia + 1
    else:
        # One statement (or one branch) holds both, and the race crosses iterations of a loop
        # around it: the barrier goes at the end of that loop's body.
        for j in range(min(k, len(pa) - 1), 0, -1):
            parent = pa[j - 1][0][pa[j - 1][1]]
            if isinstance(parent, ir.Loop) and pa[j][0] is parent.body:
                k, where = j, pa[j][1] + 1
                break
    return pa, pb, k, where


def apply_hint(kernel: ir.Kernel, finding) -> ir.Kernel | None:
    """A copy of the kernel with the finding's fix hint applied (for `kernelrace confirm` to run
    both), or None when the finding has no barrier or guard hint."""
    fix = finding.fix
    if not fix or finding.rule not in RACE_RULES or finding.first is None or fix.get("line") is None:
        return None
    a = _find(kernel, finding.first.line, finding.first.col, finding.first.kind)
    b = _find(kernel, finding.second.line, finding.second.col, finding.second.kind)
    placed = _placement(kernel, a, b) if a is not None and b is not None else None
    if placed is None:
        return None
    pa, pb, k, where = placed
    text = fix.get("text", "")
    dims = _repeating_dims(finding, kernel)
    index = where if text.startswith("insert") else None
    dim = dims[0] if "let one thread write" in text and dims else None
    if index is None and dim is None:
        return None
    return _changed(kernel, a, b, k, pb, index, dim)


def _reanalysed(kernel, a, b, k, pb, index, dim, reanalyse, lines):
    """A copy of the kernel with the change applied, and its analysis (of the pairs on `lines`)."""
    fixed = _changed(kernel, a, b, k, pb, index, dim)
    return fixed, reanalyse(fixed, lines)


def _changed(kernel, a, b, k, pb, index, dim):
    """A copy of the kernel with the change applied: a barrier inserted at `index` of the list
    around the first access, and/or the second access guarded to thread 0 of `dim`."""
    fixed = _copy(kernel)
    fa, fb = _path(fixed.body, _twin(fixed, a)), _path(fixed.body, _twin(fixed, b))
    span = _span(pb[-1][0][pb[-1][1]])
    if dim is not None:
        lst, i = fb[-1]
        lst[i] = ir.If(ir.BinOp("==", ir.Builtin(f"tid.{dim}"), ir.Const(0)), [lst[i]], [], span)
    if index is not None:
        lst = fa[k][0]
        lst.insert(index, ir.Barrier(ir.BLOCK, frozenset({ir.SHARED, ir.GLOBAL}), span, "hint"))
    return fixed


def _copy(kernel: ir.Kernel) -> ir.Kernel:
    """A copy of the kernel whose statements and statement lists are new (a change inserts into
    them) and whose expressions and access sites are the original's: frozen, or never changed
    after lowering, so sharing them is what a deep copy would say, at a fraction of its cost."""
    fixed = copy.copy(kernel)
    fixed.body = _copy_stmts(kernel.body)
    for name in ("buffers", "block_dim", "grid_dim", "grid_params", "bindings", "definitions", "param_ranges"):
        setattr(fixed, name, dict(getattr(kernel, name)))
    fixed.buffers = {n: copy.copy(b) for n, b in kernel.buffers.items()}
    fixed.params = list(kernel.params)
    return fixed


def _copy_stmts(stmts: list) -> list:
    out = []
    for s in stmts:
        s = copy.copy(s)
        if isinstance(s, ir.If):
            s.then, s.orelse = _copy_stmts(s.then), _copy_stmts(s.orelse)
        elif isinstance(s, ir.Loop):
            s.init, s.body, s.update = _copy_stmts(s.init), _copy_stmts(s.body), _copy_stmts(s.update)
        out.append(s)
    return out


def _line(span: ir.Span) -> tuple[int, str]:
    """The line to show a user: the original source's, for SPIR-V compiled from GLSL."""
    if span.origin is not None:
        return span.origin.line, f" of {span.origin.file}"
    return span.line, ""


def _span(s) -> ir.Span:
    return s.access.span if isinstance(s, ir.MemOp) else s.span


def _twin(fixed: ir.Kernel, acc: ir.Access) -> ir.Access:
    """The access of the copied kernel with `acc`'s id (`_copy` shares them, but a kernel copied
    otherwise keeps its accesses' ids only)."""
    twin = _access_where(fixed.body, lambda x: x.id == acc.id)
    if twin is None:
        raise LookupError(acc.id)
    return twin


def _repeated_write(result, line: int) -> bool:
    """A write-write race of the store at `line` with itself (a benign one only --strict reports)."""
    return any(f.rule == "write-after-write" and f.second.line == line and f.first is not None
               and f.first.line == line for f in result.findings)


def _same_value_only(result, line: int) -> bool:
    """The store at `line` collides with itself, and only where both threads store the same value:
    letting one thread write changes nothing it stores (the claim the guard hint makes)."""
    own = [f for f in result.findings if f.rule == "write-after-write" and f.second.line == line
           and f.first is not None and f.first.line == line]
    return bool(own) and all((f.witness or {}).get("benign") for f in own)


def _repeating_dims(finding, kernel: ir.Kernel) -> list[str]:
    """Thread dimensions in which the witness's two threads differ: the ones a guard would fold."""
    w = finding.witness or {}
    t1, t2 = w.get("first_thread"), w.get("second_thread")
    if not t1 or not t2:
        return []
    return [d for i, d in enumerate(DIMS) if t1[i] != t2[i] and kernel.block_dim.get(d) != 1]


def _describe(kernel, lang, what, index, dim, lst, pb, k, removes) -> Fix:
    barrier = BARRIER_TEXT.get(lang, "a block barrier")
    if index is not None and index < len(lst):
        line, of = _line(_span(lst[index]))
        place = f"insert `{barrier}` before line {line}{of}"
    else:
        line, of = _line(_span(lst[-1]))
        place = f"insert `{barrier}` at the end of the enclosing block, after the statement starting at line {line}{of}"
    guard_line, guard_of = _line(_span(pb[-1][0][pb[-1][1]]))
    guard = ""
    if dim is not None:
        cond = THREAD_TEXT.get(lang, "tid.{d}").format(d=dim, n=DIMS.index(dim)) + " == 0"
        guard = (f"let one thread write: guard line {guard_line}{guard_of} with `if ({cond})` "
                 f"(every thread stores the same value)")
    if what == "guard":
        text, line = guard, guard_line
    elif what == "barrier+guard":
        text = f"{place}, and {guard}"
    else:
        text = place
    tir = ""
    if what != "guard":
        tir = 'T.tvm_storage_sync("shared") between the two accesses'
        if lang in ("metal", "spirv", "wgsl", "opencl"):
            # Said with the TIR change (shown for TVM builds only), not of a hand-written kernel.
            tir += (" (on this target it orders threadgroup/workgroup memory only; for a device buffer the "
                    "barrier must also order device memory: Metal mem_flags::mem_device, Vulkan UniformMemory "
                    "semantics, WebGPU storageBarrier(), OpenCL CLK_GLOBAL_MEM_FENCE)")
    if dim is not None:
        tir += (" and " if tir else "") + f"the store under `if threadIdx.{dim} == 0`"
    return Fix(text, line, removes, tir)


def grid_hint(kernel: ir.Kernel, finding) -> Fix:
    """The hint for a race between blocks (grid.py). No barrier placement applies: a block barrier
    waits for one block. An update of one element (a read and a write on one line, or a write whose
    value reads the same buffer) is an accumulation: make it atomic. Otherwise: disjoint elements per
    block, an out-of-place buffer, or two launches. Not re-checked (it is a change of algorithm)."""
    from analyzer import messages

    buf = finding.second.buffer or "the buffer"
    lang = kernel.lang
    accumulates = False
    for loc in (finding.second, finding.first):
        acc = _find(kernel, loc.line, loc.col, loc.kind) if loc is not None else None
        if acc is not None and acc.is_write and acc.value is not None:
            # The value stored reads the element's own buffer: a read-modify-write.
            accumulates |= any(r.buffer == acc.buffer for r in _reads(acc.value))
    if accumulates:
        atomic = messages.GRID_ATOMIC.get(lang, "an atomic add").format(buf=buf)
        text = messages.GRID_HINT_ATOMIC.format(atomic=atomic)
    elif any(isinstance(s, ir.Barrier) and s.scope == ir.GRID for s in ir.walk_stmts(kernel.body)):
        # A cooperative kernel: a grid sync between them is the fix it already knows.
        text = messages.GRID_HINT_SYNC.format(buf=buf)
    else:
        text = messages.GRID_HINT_LAYOUT.format(buf=buf)
    return Fix(text, finding.second.line, None)
