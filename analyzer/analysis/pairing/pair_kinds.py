"""What a pair of access instances is: which one a thread would run first, the hazard its two
accesses make (write-after-write, read-after-write, write-after-read), and whether a race found
before stands for it in the report."""

from __future__ import annotations

from analyzer import ir
from analyzer.analysis.execution.concurrency import ANY, MANY
from analyzer.analysis.execution.events import AccessEvent
from analyzer.analysis.pairing.hazards import RAW, WAR, WAW

def first_instance(pa, pb, ea: AccessEvent, eb: AccessEvent) -> str:
    """'a', 'b' or 'either': which instance one thread would execute first."""
    ka = [(p.loop, p.relative, p.k) for p in pa]
    kb = [(p.loop, p.relative, p.k) for p in pb]
    for (la, ra, xa), (lb, rb, xb) in zip(ka, kb):
        if la != lb or ra != rb:
            return "either"
        if xa >= MANY or xb >= MANY:
            if xa < MANY and xb >= MANY and xb != ANY:
                return "a"
            if xb < MANY and xa >= MANY and xa != ANY:
                return "b"
            return "either"
        if xa != xb:
            return "a" if xa < xb else "b"
    if ea.access is eb.access:
        return "same"
    return "a" if ea.order < eb.order else "b"


def hazard_kind(first: ir.Access, second: ir.Access) -> str | None:
    if first.is_write and second.is_write:
        return WAW
    if first.is_write:
        return RAW
    if second.is_write:
        return WAR
    return None


def stands_in_report(kind: str, first: AccessEvent, second: AccessEvent, sink: list) -> bool:
    """Does a race found before stand for this one in the report? The report keeps one finding
    per rule and pair of source lines (pipeline._dedupe): the first in its order (by columns,
    then as found) unless that one's witness did not replay. A race of the same kind and lines
    whose witness replayed, placed no later, is the one shown, and this one's details (the
    readable witness, its replay, the causes) would be computed for nothing: the four lanes
    of a vector read racing one write (TVM's scans) asked them four times."""
    f, s = first.access.span, second.access.span
    for h in sink:
        hf, hs = h.first.access.span, h.second.access.span
        if (h.kind == kind and not h.benign and h.replay_failure is None
                and (hs.file, hs.line, hf.file, hf.line) == (s.file, s.line, f.file, f.line)
                and (hs.col, hf.col) <= (s.col, f.col)):
            return True
    return False
