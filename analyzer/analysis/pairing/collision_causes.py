"""What a collision rests on: particular memory contents (addresses that meet only through an index
map the analysis cannot see) or loop-carried values that repeat between two iterations. The
first decides a race's severity; neither changes the verdict.

Split from races.py: each is a question asked again of a satisfiable query's solver, under extra
assumptions, once the collision is found.
"""

from __future__ import annotations

from collections import defaultdict
from functools import cached_property

import z3

from analyzer.analysis.decision.solver import LOOP_STATE
from analyzer.analysis.execution.events import AccessEvent


class CollisionCauses:
    """Part of `races.PairChecker`: asks through `_refuted` (solver_budget.py). Uses the checker's
    `exact`, `enc`, `ev` and `loop_line`."""

    def _data_dependent(self, solver, model, explain: bool = False) -> tuple[str, ...]:
        """Does the race need particular memory contents? Ask again with every value loaded from
        memory strictly increasing in its address, as an index map that is a sorted permutation or
        a cumulative distribution is, and each load inside its buffer's declared shape: if the
        race goes away, it depends on the data."""
        ordered, bufs = self._loads_ordered()
        return bufs if ordered and self._refuted(solver, ordered, explain, model) else ()

    def _loads_ordered(self) -> tuple[list, tuple[str, ...]]:
        """The assumptions of `_data_dependent` for the last query, and the buffers they are about:
        buffers the kernel only reads (an index map; what the kernel itself writes, shared memory
        above all, holds whatever it stored, in order or not)."""
        apps = [(b, x) for x in self.exact.last_loads if (b := self._load_buffer(x)) not in self._written]
        pairs = [(x, y) for i, (bx, x) in enumerate(apps) for by, y in apps[i + 1:] if bx and bx == by]
        if not pairs:
            return [], ()
        ordered = [z3.And(z3.Implies(x.arg(0) < y.arg(0), x < y), z3.Implies(y.arg(0) < x.arg(0), y < x),
                          z3.Implies(x.arg(0) == y.arg(0), x == y))
                   for x, y in pairs]
        bufs = tuple(sorted({self._load_buffer(x) for pair in pairs for x in pair}))
        return ordered + self._load_bounds(x for _, x in apps), bufs

    @cached_property
    def _written(self) -> set[str]:
        return {e.access.buffer for e in self.ev.accesses.values() if e.access.is_write}

    def _loop_state_repeats(self, solver, model) -> tuple[tuple[tuple[str, int], ...], tuple[str, ...]]:
        """Does the collision need loop state to hold the same values in two iterations? For each
        loop-carried value the query reads, ask again with it different wherever the iterations
        it is read in differ; if no such value is needed so, ask again with the loads ordered as
        `_data_dependent` orders them. Returns the values the collision needs to repeat (with the line of the loop
        that updates each), and the buffers whose contents are the other way to collide. A
        persistent kernel's tile counters never repeat; a double buffer's `stage ^= 1` does:
        neither verdict nor severity changes, the note says what the collision rests on."""
        by_fn: dict[str, list] = defaultdict(list)
        for x in self.exact.last_state:
            by_fn[x.decl().name()].append(x)
        # Injective in the iteration: the state differs wherever the iterations do (a race within
        # one iteration reads one state value and needs nothing to repeat).
        differ = {name: z3.And(*[z3.Or(x != y, z3.And(*[p == q for p, q in zip(x.children(), y.children())]))
                                 for i, x in enumerate(apps) for y in apps[i + 1:]])
                  for name, apps in by_fn.items() if len(apps) > 1}
        needed = [name for name, d in differ.items() if self._refuted(solver, [d], True, model)]
        bufs: tuple[str, ...] = ()
        if not needed and differ:
            ordered, bufs = self._loads_ordered()
            if ordered:
                needed = [name for name, d in differ.items() if self._refuted(solver, [d] + ordered, True, model)]
        found = {(m["var"], self.loop_line.get(int(m["loop"]), 0))
                 for name in needed if (m := LOOP_STATE.match(name))}
        return tuple(sorted(found)), (bufs if found else ())

    def _load_bounds(self, apps) -> list:
        """In-bounds facts of the loads whose values the addresses use."""
        facts = []
        for x in apps:
            sym, k = self.enc.loads.get(x.get_id(), (None, 0))
            ev = self._load_event(x)
            if sym is not None and ev is not None:
                facts += self._in_bounds(ev.access, sym.args[0], x.arg(0), k)
        return facts

    def _load_event(self, app) -> AccessEvent | None:
        """The access site a load function reads (`load17` is site 17)."""
        site = app.decl().name()[4:]
        return self.ev.accesses.get(int(site)) if site.isdigit() else None

    def _load_buffer(self, app) -> str | None:
        ev = self._load_event(app)
        return ev.access.buffer if ev is not None else None
