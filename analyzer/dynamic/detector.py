"""Races observed in a run: two threads of one block touch the same bytes in the same barrier
interval, at least one writes, and not both atomically.

The interval of an access is, for its memory space, the number of block barriers (and, between
threads of one warp, warp barriers) ordering that space its thread has passed: two threads with
equal counts met no barrier between the accesses. A barrier ordering only shared memory leaves
global accesses in one interval, as the static analysis has it. Two writes of the same value are
benign (the static analysis reports them only with --strict) and not counted.
"""

from __future__ import annotations

from dataclasses import dataclass

from analyzer import ir
from analyzer.dynamic.values import same


@dataclass(frozen=True)
class Touch:
    thread: tuple[int, int, int]
    access: ir.Access
    is_write: bool
    iterations: tuple = ()      # ((loop id, iteration), ...) of the loops the thread was in
    warp: int = 0


@dataclass(frozen=True)
class Race:
    """The first observed collision of two access sites."""
    buffer: str
    space: str
    byte: int
    element: int
    first: Touch        # the earlier access in the run
    second: Touch
    block: tuple[int, int, int] = (0, 0, 0)

    @property
    def lines(self) -> frozenset[int]:
        return frozenset((self.first.access.span.line, self.second.access.span.line))

    def describe(self) -> str:
        f, s = self.first, self.second
        return (f"{s.access.kind if not s.access.atomic else 'atomic'} by thread {s.thread} at line "
                f"{s.access.span.line} after {f.access.kind if not f.access.atomic else 'atomic'} by thread "
                f"{f.thread} at line {f.access.span.line}, {self.buffer}[{self.element}] ({self.space}), "
                f"no barrier between them")


class Detector:
    """Shadow memory: per (block, buffer, byte, interval), who read and who wrote it."""

    def __init__(self):
        self._shadow: dict[tuple, tuple[dict, dict]] = {}
        self.races: dict[tuple[int, int], Race] = {}     # (site, site) -> first race seen

    def observe(self, t, acc: ir.Access, offset: int, is_write: bool, value=None, size: int = 1) -> None:
        # Tracked per element: the interpreter runs only accesses of whole elements.
        block_count, warp_count = t.ordered.get(acc.space, (0, 0))
        me = (t.tid["x"], t.tid["y"], t.tid["z"])
        bid = (t.bid["x"], t.bid["y"], t.bid["z"])
        entry = (me, t.warp, warp_count, acc, is_write, value, tuple(t.iters.items()))
        first = offset // size
        for elem in range(first, first + max(1, acc.width // size)):
            key = (bid, acc.buffer, elem, block_count)
            slot = self._shadow.get(key)
            if slot is None:
                slot = self._shadow[key] = ({}, {})
            readers, writers = slot
            if writers or (is_write and readers):
                for other in list(writers.values()) + (list(readers.values()) if is_write else []):
                    if self._conflict(entry, other):
                        self._report(acc, elem * size, size, other, entry, bid)
                        break
            (writers if is_write else readers)[me] = entry

    @staticmethod
    def _conflict(a, b) -> bool:
        me, warp, wc, acc, write, value, _ = a
        other, owarp, owc, oacc, owrite, ovalue, _ = b
        if me == other or ir.atomic_together(acc, oacc, between_blocks=False):
            return False
        if write and owrite and not acc.atomic and not oacc.atomic and value is not None and same(value, ovalue):
            return False
        return warp != owarp or wc == owc

    def _report(self, acc: ir.Access, byte: int, size: int, earlier, later, bid) -> None:
        key = (earlier[3].id, later[3].id) if earlier[3].id <= later[3].id else (later[3].id, earlier[3].id)
        if key in self.races:
            return
        self.races[key] = Race(acc.buffer, acc.space, byte, byte // size,
                               Touch(earlier[0], earlier[3], earlier[4], earlier[6], earlier[1]),
                               Touch(later[0], later[3], later[4], later[6], later[1]), bid)
