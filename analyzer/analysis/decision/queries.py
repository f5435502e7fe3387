"""Solver verdicts remembered by query, so that the same question is never asked twice.

A kernel's fix hints are checked by analysing copies of it with one barrier or guard added; most
of their pair queries are the ones the first analysis already asked. Z3 shares structurally equal
terms within its context, so the ids of a query's constraints name the question exactly. The
cache holds the constraints themselves too, which keeps those ids from being reused.
"""

from __future__ import annotations

from dataclasses import dataclass

import z3


@dataclass
class Answer:
    """A remembered verdict: what a solver's check, model and reason would have said."""
    result: z3.CheckSatResult
    _model: z3.ModelRef | None
    _reason: str

    def model(self) -> z3.ModelRef:
        assert self._model is not None
        return self._model

    def reason_unknown(self) -> str:
        return self._reason


class QueryCache:
    def __init__(self) -> None:
        self._answers: dict[tuple, tuple[list, Answer]] = {}
        # Python term object -> (it, its Z3 id): most of a query's constraints are pieces kept and
        # stated again (collision_constraints.py), and asking Z3 for an id costs a foreign call.
        # Kept alive here, an object's id() names it.
        self._ids: dict[int, tuple[object, int]] = {}

    def key(self, constraints: list, rlimit: int) -> tuple:
        ids = self._ids
        out = [rlimit]
        for c in constraints:
            hit = ids.get(id(c))
            if hit is None or hit[0] is not c:
                hit = ids[id(c)] = (c, c.get_id())
            out.append(hit[1])
        return tuple(out)

    def get(self, key: tuple) -> Answer | None:
        hit = self._answers.get(key)
        return None if hit is None else hit[1]

    def put(self, key: tuple, constraints: list, res, solver) -> None:
        model = solver.model() if res == z3.sat else None
        reason = solver.reason_unknown() if res == z3.unknown else ""
        self._answers[key] = (list(constraints), Answer(res, model, reason))
