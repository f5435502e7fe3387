"""Everything the rules may read about one kernel: the IR and the results of the analyses."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from analyzer import ir, messages
from analyzer.analysis.conditions.race_condition import queries_condition, witness_condition
from analyzer.analysis.conditions.race_freedom import race_freedom
from analyzer.analysis.decision.solver import DIMS, Encoder, truth
from analyzer.analysis.decision.solver_budget import RLIMIT_PER_SECOND
from analyzer.analysis.execution.events import AccessEvent, BarrierEvent, Evaluation
from analyzer.analysis.interblock.grid import block_dims_read
from analyzer.analysis.pairing.hazards import GRID_DETAIL_CAP, NOT_SEARCHED
from analyzer.analysis.pairing.races import Hazard, PairAnalysis
from analyzer.findings import Finding, Location

SPACE_NAMES = {"cuda": {ir.SHARED: "shared", ir.GLOBAL: "global"},
               "metal": {ir.SHARED: "threadgroup", ir.GLOBAL: "device"},
               "spirv": {ir.SHARED: "Workgroup", ir.GLOBAL: "StorageBuffer", ir.PRIVATE: "Function"},
               "wgsl": {ir.SHARED: "workgroup", ir.GLOBAL: "storage", ir.PRIVATE: "function"},
               "opencl": {ir.SHARED: "__local", ir.GLOBAL: "__global", ir.PRIVATE: "__private"}}
# At most this many race conditions of one kernel are projected (each within ISL's budget); the
# others are their witness's values: a count, so that a kernel gets the same report on a loaded
# machine, and a kernel with hundreds of races does not spend seconds on each.
CONDITIONS_PER_KERNEL = 32
# Metal's names for the memory a barrier orders, in the order they are written.
METAL_FLAGS = ((ir.GLOBAL, "mem_flags::mem_device"), (ir.SHARED, "mem_flags::mem_threadgroup"))


@dataclass
class KernelAnalysis:
    kernel: ir.Kernel
    evaluation: Evaluation
    pairs: PairAnalysis
    strict: bool = False
    target: str | None = None
    params: dict[str, Any] | None = None
    # Races between blocks (grid.py); None when not asked for (--scope block).
    grid: PairAnalysis | None = None
    conditions_projected: int = 0     # race conditions computed with ISL so far (see CONDITIONS_PER_KERNEL)
    # Hazard id -> the hazards folded into its finding (`_fold`); their condition, by their ids.
    folded: dict = field(default_factory=dict)
    conditions: dict = field(default_factory=dict)

    def memory(self, space: str) -> str:
        return SPACE_NAMES.get(self.kernel.lang, {}).get(space, space)

    def buffer_name(self, name: str) -> str:
        buf = self.kernel.buffers.get(name)
        return (buf.display or name) if buf is not None else name

    def user_line(self, span: ir.Span) -> int:
        """The line a message names for an access: a hand-checked shader's GLSL line (the file
        the user wrote, `X.comp` analysed as `X.comp.spvasm`), else the analysed file's line."""
        o = span.origin
        return o.line if o is not None and span.file == o.file + ".spvasm" else span.line

    def location(self, e: AccessEvent) -> Location:
        acc = e.access
        loc = self.span_location(acc.span, "atomic" if acc.atomic else acc.kind)
        loc.buffer, loc.memory = self.buffer_name(acc.buffer), self.memory(acc.space)
        return loc

    def span_location(self, span: ir.Span, kind: str, text: str | None = None) -> Location:
        """Where a span is, with its source line and, for compiled code, the line it came from."""
        o = span.origin
        return Location(span.file, span.line, span.col, kind, None, None,
                        self.kernel.line(span.line).strip() if text is None else text,
                        (o.file, o.line, o.col) if o is not None else None, self.kernel.origin_line(o))

    def finding(self, rule: str, severity: str, message: str, second: Location,
                first: Location | None = None, witness=None, notes=None) -> Finding:
        return Finding(rule, severity, message, self.kernel.name, self.kernel.file, second, first,
                       witness, self.target, self.params, list(notes or []))

    def divergence_witness(self, ev: BarrierEvent, budget_ms: int = 1000) -> dict | None | bool:
        """Two threads of one block of which one reaches the barrier and the other does not.

        Returns the witness, False when the solver proves no two threads differ (the condition
        only looks thread-dependent, like `threadIdx.x < blockDim.x`), None when undecided."""
        return self._divergence(ev, budget_ms, grid=False)

    def grid_divergence_witness(self, ev: BarrierEvent, budget_ms: int = 1000) -> dict | None | bool:
        """Two threads of different blocks, in the same iterations of the loops around a grid sync,
        of which one reaches it and the other does not: blocks that pass it a different number of
        times. False when the solver proves every block agrees, None when undecided."""
        return self._divergence(ev, budget_ms, grid=True)

    def _divergence(self, ev: BarrierEvent, budget_ms: int, grid: bool) -> dict | None | bool:
        import z3

        enc = Encoder(self.kernel, self.kernel.warp_size, grid=grid)
        enc.collecting()
        reach = [truth(enc.term(g, 1)) for g in ev.guard]
        skip = z3.Not(z3.And(*[truth(enc.term(g, 2)) for g in ev.guard])) if ev.guard else z3.BoolVal(False)
        # A stated fact holds in every thread: the skipping one too (it parts no threads).
        reach += [truth(enc.term(g, 2)) for g in ev.assumed]
        # The same instance of the barrier: the same iterations of the loops around it (a thread
        # that reaches it in one iteration and skips it in another is no divergence).
        between = [enc.iteration(1, l) == enc.iteration(2, l) for l in ev.loops]
        if grid:
            between.insert(0, z3.Or(*[enc.bid[d] != enc.bid2[d] for d in DIMS]))
        else:
            # Two different threads: one thread that both reaches and skips it (a value the model
            # leaves free per evaluation) is no divergence.
            between.insert(0, z3.Or(*[enc.tid[1][d] != enc.tid[2][d] for d in DIMS]))
        solver = z3.Solver()
        # Solver work, not the clock, decides (the same verdict on a loaded machine); the clock
        # is a backstop, as for the pair queries.
        solver.set("rlimit", RLIMIT_PER_SECOND * budget_ms // 1000)
        solver.set("timeout", 30 * budget_ms)
        if grid:
            # A grid dimension the kernel never reads has extent 1 (grid.py's assumption).
            between += [enc.bid[d] == enc.bid2[d] for d in DIMS if d not in block_dims_read(self.kernel)]
        solver.add(*reach, skip, *between, *enc.needed())
        res = solver.check()
        if res == z3.unsat:
            return False
        if res != z3.sat:
            return None
        m = solver.model()
        if ev.loops:
            # The first iteration of the loops around the barrier where the threads can part there,
            # if they can: the easiest to follow (a reduction's `tid < s` parts threads 31 and 32
            # in its first round, and 0 and 1 only in its last).
            solver.push()
            solver.add(*[enc.iteration(1, loop) == 0 for loop in ev.loops])
            if solver.check() == z3.sat:
                m = solver.model()
            solver.pop()
        val = lambda e: enc.value_of(m, e)  # noqa: E731
        witness = {"reaching_thread": [val(enc.tid[1][d]) for d in DIMS],
                   "skipping_thread": [val(enc.tid[2][d]) for d in DIMS],
                   "block": [val(enc.bid[d]) for d in DIMS]}
        if grid:
            witness["skipping_block"] = [val(enc.bid2[d]) for d in DIMS]
        if ev.loops:
            # Both threads are at this instance of the barrier: these iterations, loop line -> its.
            loops = self.evaluation.loops
            witness["iterations"] = {(loops[loop].loop.span.line if loop in loops else loop): val(enc.iteration(1, loop))
                                     for loop in ev.loops}
        return witness

    def race_findings(self, kind: str, severity: str) -> list[Finding]:
        """Findings for the hazards of one kind (benign same-value writes only under --strict)."""
        hazards = [h for h in self.pairs.hazards + (self.grid.hazards if self.grid is not None else [])
                   if h.kind == kind and not (h.benign and not self.strict) and h.outside is None]
        self._fold(hazards)
        return [self._race(h, severity) for h in hazards]

    def _fold(self, hazards: list[Hazard]) -> None:
        """Which hazards the report folds into one finding (pipeline._dedupe: one per rule and
        pair of lines, a block's apart from the grid's): the finding's condition is the union of
        theirs, a race in any of its order groups, lanes or instances."""
        groups: dict[tuple, list[Hazard]] = {}
        for h in hazards:
            key = (h.second.access.span.line, h.first.access.span.line, h.witness.second_block is not None)
            groups.setdefault(key, []).append(h)
        for group in groups.values():
            for h in group:
                self.folded[id(h)] = group

    def out_of_bounds_findings(self, rule: str, severity: str) -> list[Finding]:
        """Findings for the collisions that exist only outside the bounds (`Hazard.outside`): at
        the access that leaves them, naming the index and the access it then meets."""
        out = []
        fmt = lambda t: "(" + ",".join(str(v) for v in t) + ")"  # noqa: E731
        for h in self.pairs.hazards + (self.grid.hazards if self.grid is not None else []):
            o = h.outside
            if o is None:
                continue
            w = h.witness
            first = o.first if w.first.index == w.second.index else w.first.index == o.thread
            other = h.second if first else h.first
            mine, theirs = (w.first, w.second) if first else (w.second, w.first)
            grid = w.second_block is not None
            block_of = lambda thread: (w.second_block if thread is w.second else w.block)  # noqa: E731
            acc = o.access.access
            at = lambda thread: f" of block {fmt(block_of(thread))}" if grid else ""  # noqa: E731
            if o.access is h.first or o.access is h.second:
                loc = self.location(o.access)
                msg = messages.OUT_OF_BOUNDS.format(
                    kind="write to" if acc.is_write else "read of", buf=self.buffer_name(acc.buffer),
                    t=fmt(mine.index), b=at(mine), index=o.index, bound=o.bound, other=other.access.kind,
                    t2=fmt(theirs.index), b2=at(theirs), l2=other.access.span.line, elem=w.element)
            else:
                # The colliding two stay in bounds; another access of one of the threads does not.
                other, loc = h.first, self.location(h.second)
                msg = messages.OUT_OF_BOUNDS_ELSEWHERE.format(
                    kind2="write to" if h.second.access.is_write else "read of",
                    buf2=self.buffer_name(h.second.access.buffer), elem=w.element, t2=fmt(w.second.index),
                    b2=at(w.second), kind1=h.first.access.kind, t1=fmt(w.first.index), b1=at(w.first),
                    l1=h.first.access.span.line, kind="the write to" if acc.is_write else "the read of",
                    buf=self.buffer_name(acc.buffer), l=acc.span.line, t=fmt(o.thread), index=o.index, bound=o.bound)
            notes = [messages.OUT_OF_BOUNDS_WHY]
            if h.data_dependent:
                notes.append(messages.DATA_DEPENDENT.format(bufs=", ".join(self.buffer_name(b) for b in h.data_dependent)))
            if h.replay_failure:
                notes.append(_replay_note(h))
            witness = self._witness(h)
            witness["out_of_bounds"] = {"line": acc.span.line, "col": acc.span.col, "thread": list(o.thread),
                                        "index": o.index, "outside": o.bound}
            out.append(self._conditioned(h, self.finding(rule, severity, msg, loc, self.location(other), witness,
                                                         notes)))
        return out

    def _race(self, h: Hazard, severity: str) -> Finding:
        w = h.witness
        fmt = lambda t: "(" + ",".join(str(v) for v in t) + ")"  # noqa: E731
        grid = w.second_block is not None
        msg = (messages.RACE_GRID if grid else messages.RACE)[h.kind].format(
            buf=self.buffer_name(h.second.access.buffer), elem=w.element, mem=self.memory(h.second.access.space),
            t1=fmt(w.first.index), t2=fmt(w.second.index), l1=self.user_line(h.first.access.span),
            b1=fmt(w.block), b2=fmt(w.second_block or w.block))
        if h.benign:
            msg += messages.BENIGN_SUFFIX
        notes = []
        if grid:
            synced = any(b.barrier.scope == ir.GRID for b in self.evaluation.barrier_events.values())
            notes.append((messages.GRID_WHY_SYNC if synced else messages.GRID_WHY).format(
                barrier=messages.GRID_BARRIER.get(self.kernel.lang, "a barrier")))
        notes += list(dict.fromkeys(self.kernel.buffers[a.access.buffer].note for a in (h.first, h.second)
                                    if self.kernel.buffers[a.access.buffer].note))
        if h.data_dependent:
            # The race needs two different elements of an index map to hold the same value.
            severity = "warning"
            notes.append(messages.DATA_DEPENDENT.format(bufs=", ".join(self.buffer_name(b) for b in h.data_dependent)))
        if h.loop_state:
            notes.append(self._loop_state_note(h))
        if h.block_state:
            severity = "warning"
            notes.append(messages.GRID_BLOCK_STATE.format(vars=", ".join(
                f"`{name}` (loop at line {line})" for name, line in h.block_state)))
        elif h.replay_failure is not None and severity == "error" and h.observed is None:
            # An error is a race demonstrated: its witness runs on the interpreter's semantics.
            # Without one that runs, a possible race: a warning, with the reason (below).
            severity = "warning"
            if h.witness.second_block is not None:
                # Between blocks, what keeps blocks apart is often a schedule (a persistent
                # kernel's tile walk) the loop-state model cannot see.
                notes.append(messages.GRID_UNVALIDATED)
        if h.contracts:
            notes.append(_contract_note(h.contracts))
        if h.replay_failure:
            notes.append(_replay_note(h))
        if h.observed is not None:
            params = ", ".join(f"{k} = {v}" for k, v in h.witness.params.items())
            notes.append(messages.OBSERVED.format(seed=h.observed, params=f", with {params}" if params else ""))
        if grid:
            pass    # warps are per block: nothing to say about them between blocks
        elif self.kernel.warp_size == 1:
            # Vulkan: subgroup size (4 to 128) and membership are the device's; none is assumed,
            # so there are no warps to speak of.
            if h.warp_synchronised:
                notes.append(messages.SUBGROUPS_UNKNOWN)
        else:
            if h.warp_synchronised:
                notes.append(messages.WARP_BARRIER_ONLY)
            warp_note = {frozenset({"same", "different"}): messages.WARPS_BOTH,
                         frozenset({"different"}): messages.WARPS_DIFFERENT_ONLY,
                         frozenset({"same"}): messages.WARPS_SAME_ONLY}.get(frozenset(h.warps))
            if warp_note:
                notes.append(warp_note)
        return self._conditioned(h, self.finding(h.kind, severity, msg, self.location(h.second),
                                                 self.location(h.first), self._witness(h), notes))

    def _conditioned(self, h: Hazard, f: Finding) -> Finding:
        """The finding with its race's condition (race_condition.py), computed now, once."""
        names: dict[str, str] = {}    # blockDim.x and gridDim.x in every dialect, as --assume reads them
        group = self.folded.get(id(h), [h])
        key = tuple(id(x) for x in group)
        c = self.conditions.get(key)
        if c is None:
            queries = [x.query for x in group if x.query is not None]
            if h.query is not None and self.conditions_projected < CONDITIONS_PER_KERNEL:
                self.conditions_projected += 1
                # The finding's own query first: its witness's values are the fallback.
                c = queries_condition([h.query] + [q for q in queries if q is not h.query], names)
            else:   # seen in a run (or a fix hint's re-analysis): the witness's values
                c = witness_condition(dict(h.witness.params), names)
            self.conditions[key] = c
        f.condition, f.condition_kind = c.text, c.how
        if c.isl_set is not None:
            f.condition_sets = (c.isl_set, c.isl_domain)
            if c.exact and c.text != "true":
                # A conditional race: the fix may be a launch guarantee, stated.
                free = race_freedom([(c.isl_set, c.isl_domain, True)])
                # (Not when only the grid's size is in it: one block is rarely the launch meant.)
                if free.known and free.exact and free.text not in ("true", "false") and _beyond_grid(free.text):
                    said = free.text.replace(" and ", " && ").replace(" or ", " || ")
                    f.notes.append(messages.CONDITIONAL_RACE.format(cond=c.text, free=free.text, said=said))
        return f

    def _witness(self, h: Hazard) -> dict:
        witness = h.witness.as_dict()
        if self.kernel.warp_size == 1 or h.witness.second_block is not None:
            witness["first_warp"] = witness["second_warp"] = None
        witness["benign"] = h.benign
        witness["data_dependent"] = [self.buffer_name(b) for b in h.data_dependent]
        witness["loop_state"] = [{"name": name, "loop_line": line} for name, line in h.loop_state]
        witness["replayed"] = h.replay_failure is None
        if h.observed is not None:
            witness["observed"] = {"block": list(h.witness.block), "seed": h.observed}
        if h.witness.second_block is not None:
            witness["block_state"] = [{"name": name, "loop_line": line} for name, line in h.block_state]
        if h.contracts:
            witness["refuted_by_contracts"] = list(h.contracts)
        grid_read = block_dims_read(self.kernel)
        launch = {k: v for k, v in (h.query.values if h.query is not None else {}).items()
                  if k.startswith("blockDim.") or (k.startswith("gridDim.") and k[-1] in grid_read)}
        if launch:
            # The symbolic launch extents the witness runs with.
            witness["launch"] = launch
        return witness

    def _loop_state_note(self, h: Hazard) -> str:
        lines: dict[str, list[int]] = {}
        for name, line in h.loop_state:
            lines.setdefault(name, []).append(line)
        names = [f"`{name}` (updated in the loop{'s' if len(ls) > 1 else ''} at line{'s' if len(ls) > 1 else ''} "
                 f"{', '.join(map(str, sorted(ls)))})" for name, ls in lines.items()]
        data = messages.LOOP_STATE_OR_DATA.format(
            bufs=", ".join(self.buffer_name(b) for b in h.loop_state_or_data)) if h.loop_state_or_data else ""
        return messages.LOOP_STATE.format(vars=", ".join(names), data=data)

    def redundant_barrier_findings(self, rule: str, severity: str) -> list[Finding]:
        """Findings for the barriers whose removal, with the redundant ones before them, lets no
        two accesses collide."""
        out = []
        for v in self.pairs.barrier_verdicts():
            if v.needed is not False:
                continue
            b = v.barrier
            msg = messages.REDUNDANT_BARRIER.format(text=self._barrier_text(b),
                                                    also=messages.REDUNDANT_ALSO if out else "")
            note = messages.REDUNDANT_CHECKED.format(pairs=v.pairs) if v.pairs else messages.REDUNDANT_SHADOWED
            loc = self.span_location(b.span, "barrier", self.kernel.line(b.span.line).strip())
            out.append(self.finding(rule, severity, msg, loc, notes=[note]))
        return out

    def barrier_scope_findings(self, rule: str, severity: str) -> list[Finding]:
        """Findings for pairs that barriers separate in execution but not in memory: each barrier
        between them leaves their memory space out (benign same-value writes only under --strict)."""
        out = []
        for h in self.pairs.barrier_scope():
            if h.benign and not self.strict:
                continue
            out.append(self._scope(h, rule, severity))
        return out

    def _scope(self, h: Hazard, rule: str, severity: str) -> Finding:
        w = h.witness
        acc = h.second.access
        mem = self.memory(acc.space)
        fmt = lambda t: "(" + ",".join(str(v) for v in t) + ")"  # noqa: E731
        msg = messages.BARRIER_SCOPE[h.kind].format(
            buf=self.buffer_name(acc.buffer), elem=w.element, mem=mem, t1=fmt(w.first.index),
            t2=fmt(w.second.index), l1=self.user_line(h.first.access.span),
            barriers=self._barrier_list(h.unordered_by, mem), hint=self.scope_hint(h.unordered_by, acc.space))
        if h.benign:
            msg += messages.BENIGN_SUFFIX
        notes = [messages.BARRIER_SCOPE_WHY.format(mem=mem)]
        if h.data_dependent:
            notes.append(messages.DATA_DEPENDENT.format(bufs=", ".join(self.buffer_name(b) for b in h.data_dependent)))
        if h.loop_state:
            notes.append(self._loop_state_note(h))
        if h.contracts:
            notes.append(_contract_note(h.contracts))
        if h.replay_failure:
            notes.append(_replay_note(h))
        witness = self._witness(h)
        witness["barriers"] = [{"line": b.span.line, "col": b.span.col, "text": self._barrier_text(b),
                                "scope": b.scope, "orders": sorted(self.memory(s) for s in b.spaces),
                                "origin": _origin(b.span)}
                               for b in h.unordered_by]
        return self._conditioned(h, self.finding(rule, severity, msg, self.location(h.second), self.location(h.first),
                                                 witness, notes))

    def _barrier_text(self, b: ir.Barrier) -> str:
        return b.text or self.kernel.line(b.span.line).strip().rstrip(";")

    def _barrier_list(self, barriers, mem: str) -> str:
        if not barriers:
            return messages.BARRIER_SCOPE_NONE.format(mem=mem)
        texts = list(dict.fromkeys(self._barrier_text(b) for b in barriers))
        lines = [f"{b.span.line}" + (f" (from {o.file}:{o.line})" if (o := b.span.origin) else "") for b in barriers]
        if len(barriers) == 1:
            return messages.BARRIER_SCOPE_ONE.format(text=texts[0], lines=lines[0], mem=mem)
        return messages.BARRIER_SCOPE_MANY.format(text=" / ".join(texts), lines=_and(lines), mem=mem)

    def scope_hint(self, barriers, space: str) -> str:
        """What would make the barriers order `space`, in the kernel's dialect."""
        lang = self.kernel.lang
        hint = messages.BARRIER_SCOPE_HINT.get(lang)
        if lang in ("spirv", "wgsl"):
            return hint[space]
        if lang == "metal":
            hints = []
            for b in barriers or [ir.Barrier(ir.BLOCK, frozenset(), ir.Span("", 0, 0))]:
                spaces = b.spaces | {space}
                fn = "threadgroup_barrier" if b.scope == ir.BLOCK else "simdgroup_barrier"
                hints.append(hint.format(fn=fn, flags=" | ".join(f for s, f in METAL_FLAGS if s in spaces)))
            return " / ".join(dict.fromkeys(hints))
        if lang == "opencl":
            fns = {"sub_group_barrier" if b.scope == ir.WARP else "barrier" for b in barriers} or {"barrier"}
            return " / ".join(hint.format(fn=fn) for fn in sorted(fns))
        if lang == "cuda":
            warp_only = bool(barriers) and all(b.scope == ir.WARP for b in barriers)
            return hint.format(fn="__syncwarp" if warp_only else "__syncthreads")
        return messages.BARRIER_SCOPE_HINT_OTHER.format(mem=self.memory(space))


def _beyond_grid(text: str) -> bool:
    """Does a condition name something besides the grid's extents?"""
    return bool(re.search(r"\b(?!gridDim\b)[A-Za-z_]\w*", re.sub(r"gridDim\.[xyz]", "", text).replace(" and ", " ")
                          .replace(" or ", " ")))


def _contract_note(names: tuple[str, ...]) -> str:
    many = len(names) > 1
    return messages.CONTRACT_WOULD_REFUTE.format(s="s" if many else "", names=", ".join(names),
                                                 verb="" if many else "s")


def _origin(span: ir.Span) -> dict | None:
    o = span.origin
    return {"file": o.file, "line": o.line, "col": o.col} if o is not None else None


def _and(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def _replay_note(h: Hazard) -> str:
    if h.replay_failure == NOT_SEARCHED:
        return messages.WITNESS_NOT_SEARCHED.format(n=GRID_DETAIL_CAP)
    return messages.WITNESS_NOT_REPLAYED.format(reason=h.replay_failure)
