"""Race conditions against brute force, a pinned slice of benchmarks/condition_campaign.py: kernels
with scalar parameters, each finding's condition (the union over the findings of a pair of
statements) compared with where the oracle sees the two statements race, over a grid of parameter
values. The campaign itself draws thousands (docs/benchmarks.md)."""

import importlib.util
import sys
from collections import Counter
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
_spec = importlib.util.spec_from_file_location("differential", ROOT / "benchmarks" / "differential.py")
dt = sys.modules.setdefault("differential", importlib.util.module_from_spec(_spec))
if not hasattr(dt, "run_campaign"):
    _spec.loader.exec_module(dt)
_cspec = importlib.util.spec_from_file_location("condition_campaign", ROOT / "benchmarks" / "condition_campaign.py")
cc = importlib.util.module_from_spec(_cspec)
_cspec.loader.exec_module(cc)

from differential import (ALL, Barrier, Bin, Case, Cmp, Const, For, If, IntValue, Kernel, Param,  # noqa: E402
                          Store, Tid, Var)

A = "g0"
TX, TY = Tid(0), Tid(1)


def _check(case: Case, tmp_path) -> tuple[Counter, list]:
    tally, mismatches = Counter(), []
    cc.check_kernel(case, "cuda", tmp_path, tally, mismatches)
    return tally, mismatches


# Each found by the campaign (seed 20261206), reduced by hand to what mismatched.
PINNED = {
    # for (r = 0; r < P + 4; r += 4) g0[7] = t;  -- two threads race in one iteration (P >= -3):
    # the first order group's query alone said "races when P > 0", two iterations.
    "tie_in_one_iteration": Kernel((2, 1, 1), ("P",), (A,), (), (
        For("r", Const(0), Bin("+", Param("P"), Const(4)), Const(4), (Store(A, Const(7), IntValue(TX)),)),
        Barrier(ALL))),
    # if (P <= ty) g0[P] = tx;  -- two lanes of a row, or nothing.
    "guarded_by_parameter": Kernel((2, 2, 1), ("P",), (A,), (), (
        If(Cmp("<=", Param("P"), TY), (Store(A, Param("P"), IntValue(TX)),), ()),)),
    # for (r = 0; r < 2; r++) g0[r * P + tx] = tx;  -- rows overlap when P < 2 (P = 0: a site
    # against itself in two iterations; 0 < P < 2: neighbours).
    "rows_overlap": Kernel((2, 1, 1), ("P",), (A,), (), (
        For("r", Const(0), Const(2), Const(1), (Store(A, Bin("+", Bin("*", Var("r"), Param("P")), TX), IntValue(TX)),)),)),
}


@pytest.mark.parametrize("name", PINNED)
def test_pinned_conditions(name, tmp_path):
    tally, mismatches = _check(Case(PINNED[name], ()), tmp_path)
    assert tally["kernels"] == 1 and tally["exact pairs"] + tally["sufficient pairs"] >= 1, tally
    assert not mismatches, mismatches[0][:2] + tuple(mismatches[0][3:])
    assert tally["pairs right"] == tally["exact pairs"] + tally["sufficient pairs"], tally


SEED = 20261206
DRAWS = 12


def test_campaign_slice(tmp_path):
    """The campaign's first draws (those with parameters): every condition right."""
    tally, mismatches = Counter(), []

    def body(case):
        try:
            dt.check_constant_indices(case.kernel)
        except dt.IllDefined:
            return
        cc.check_kernel(case, "cuda", tmp_path, tally, mismatches)

    dt.run_hypothesis(SEED, DRAWS, body)
    assert tally["kernels"] >= 4 and tally["pairs right"] >= 2, tally
    assert not mismatches, [m[:2] + tuple(m[3:]) for m in mismatches]
    assert not tally["missed pairs"], tally
