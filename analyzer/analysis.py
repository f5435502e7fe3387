"""Everything the rules may read about one kernel: the IR and the results of the analyses."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from . import ir, messages
from .findings import Finding, Location
from .races import Hazard, PairAnalysis
from .solver import DIMS, Encoder, truth
from .symbolic import AccessEvent, BarrierEvent, Evaluation

SPACE_NAMES = {"cuda": {ir.SHARED: "shared", ir.GLOBAL: "global"},
               "metal": {ir.SHARED: "threadgroup", ir.GLOBAL: "device"}}


@dataclass
class KernelAnalysis:
    kernel: ir.Kernel
    evaluation: Evaluation
    pairs: PairAnalysis
    strict: bool = False
    target: str | None = None
    params: dict[str, Any] | None = None

    def memory(self, space: str) -> str:
        return SPACE_NAMES.get(self.kernel.lang, {}).get(space, space)

    def buffer_name(self, name: str) -> str:
        buf = self.kernel.buffers.get(name)
        return (buf.display or name) if buf is not None else name

    def location(self, e: AccessEvent) -> Location:
        acc = e.access
        kind = "atomic" if acc.atomic else acc.kind
        return Location(acc.span.file, acc.span.line, acc.span.col, kind, self.buffer_name(acc.buffer),
                        self.memory(acc.space), self.kernel.line(acc.span.line).strip())

    def finding(self, rule: str, severity: str, message: str, second: Location,
                first: Location | None = None, witness=None, notes=None) -> Finding:
        return Finding(rule, severity, message, self.kernel.name, self.kernel.file, second, first,
                       witness, self.target, self.params, list(notes or []))

    def divergence_witness(self, ev: BarrierEvent, budget_ms: int = 1000) -> dict | None | bool:
        """Two threads of one block of which one reaches the barrier and the other does not.

        Returns the witness, False when the solver proves no two threads differ (the condition
        only looks thread-dependent, like `threadIdx.x < blockDim.x`), None when undecided."""
        import z3

        enc = Encoder(self.kernel, self.kernel.warp_size)
        enc.collecting()
        reach = [truth(enc.term(g, 1)) for g in ev.guard]
        skip = z3.Not(z3.And(*[truth(enc.term(g, 2)) for g in ev.guard])) if ev.guard else z3.BoolVal(False)
        solver = z3.Solver()
        solver.set("timeout", budget_ms)
        solver.add(*reach, skip, *enc.needed())
        res = solver.check()
        if res == z3.unsat:
            return False
        if res != z3.sat:
            return None
        m = solver.model()
        val = lambda e: enc.value_of(m, e)  # noqa: E731
        return {"reaching_thread": [val(enc.tid[1][d]) for d in DIMS],
                "skipping_thread": [val(enc.tid[2][d]) for d in DIMS],
                "block": [val(enc.bid[d]) for d in DIMS]}

    def race_findings(self, kind: str, severity: str) -> list[Finding]:
        """Findings for the hazards of one kind (benign same-value writes only under --strict)."""
        out = []
        for h in self.pairs.hazards:
            if h.kind != kind or (h.benign and not self.strict):
                continue
            out.append(self._race(h, severity))
        return out

    def _race(self, h: Hazard, severity: str) -> Finding:
        w = h.witness
        fmt = lambda t: "(" + ",".join(str(v) for v in t) + ")"  # noqa: E731
        msg = messages.RACE[h.kind].format(
            buf=self.buffer_name(h.second.access.buffer), elem=w.element, mem=self.memory(h.second.access.space),
            t1=fmt(w.first.index), t2=fmt(w.second.index), l1=h.first.access.span.line)
        if h.benign:
            msg += messages.BENIGN_SUFFIX
        notes = []
        if h.data_dependent:
            # The race needs two different elements of an index map to hold the same value.
            severity = "warning"
            notes.append(messages.DATA_DEPENDENT.format(bufs=", ".join(self.buffer_name(b) for b in h.data_dependent)))
        if h.warp_synchronised:
            notes.append(messages.WARP_BARRIER_ONLY)
        if h.warps == {"same", "different"}:
            notes.append(messages.WARPS_BOTH)
        elif h.warps == {"different"}:
            notes.append(messages.WARPS_DIFFERENT_ONLY)
        elif h.warps == {"same"}:
            notes.append(messages.WARPS_SAME_ONLY)
        witness = w.as_dict()
        witness["benign"] = h.benign
        witness["data_dependent"] = [self.buffer_name(b) for b in h.data_dependent]
        return self.finding(h.kind, severity, msg, self.location(h.second), self.location(h.first),
                            witness, notes)
