"""The points an exact query is asked at (solver_budget._at_cheap_model): once a point with every
input fixed is left undecided, the later points get a share of the budget, and nothing is
concluded from them but a collision."""

from __future__ import annotations

import z3

from analyzer.analysis.decision import solver_budget
from analyzer.analysis.decision.solver_budget import SolverBudget
from analyzer.analysis.pairing.hazards import PairAnalysis


class _Facts:
    """The cheap encoder's part `_at_cheap_model` asks for: no shifts; each model's exact point is
    a fact that moves the next model on (the input differs from every value seen)."""

    def __init__(self, i):
        self.i = i

    def defined_shifts(self):
        return []

    def exact_points(self, model):
        return [self.i != model.eval(self.i, model_completion=True)]


class _Checker(SolverBudget):
    """A checker with the attributes SolverBudget reads; it records each query's resource limit."""

    def __init__(self, i):
        self.rlimit, self.clock_ms, self.timeout_ms = 200_000, 60_000, 1000
        self.deadline, self.cache, self.escalations = None, None, 0
        self.fast = _Facts(i)
        self.asked: list[tuple[int, object]] = []

    def _solve_once(self, constraints, out, live, tactic="preprocess", verdict=False):
        res, solver = super()._solve_once(constraints, out, live, tactic, verdict)
        self.asked.append((self.rlimit, res))
        return res, solver


def _hard(i):
    """A query the budget leaves undecided whatever the input: a cube sum (Fermat's n = 3) over
    variables no input fixes."""
    x, y, z = z3.Ints("x y z")
    return [x > 0, y > 0, z > 0, x * x * x + y * y * y == z * z * z + i * 0]


def test_points_after_an_undecided_one_are_asked_on_a_share_of_the_budget():
    i = z3.Int("i")
    checker = _Checker(i)
    cheap = [i >= 0]
    solver = z3.Solver()
    solver.add(*cheap)
    assert solver.check() == z3.sat
    out = PairAnalysis()
    assert checker._at_cheap_model(_hard(i), cheap, solver, [i], out, False) is None
    # The pinned exact queries (the cheap ones are sat, and unsat once the box's values are spent).
    points = [(rl, res) for rl, res in checker.asked if res == z3.unknown]
    assert points[0] == (200_000, z3.unknown)
    share = 200_000 // solver_budget.POINT_SHARE_AFTER_UNKNOWN
    assert len(points) > 2 and all(rl == share for rl, _ in points[1:])


def test_a_collision_at_a_point_is_found_on_the_whole_budget_before_any_undecided_point():
    i, x = z3.Ints("i x")
    checker = _Checker(i)
    cheap = [i >= 3]
    solver = z3.Solver()
    solver.add(*cheap)
    assert solver.check() == z3.sat
    res, pinned = checker._at_cheap_model([x == 2 * i, x >= 6], cheap, solver, [i], PairAnalysis(), False)
    assert res == z3.sat and solver_budget.at_a_point(pinned)
    assert {rl for rl, _ in checker.asked} == {200_000}
