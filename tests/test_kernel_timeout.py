"""A per-kernel time limit: an over-long analysis ends in `unknown`, never in a hang or a clean verdict."""

import time
from pathlib import Path

from conftest import FIXTURES, fixture_args


def test_pairs_left_when_the_kernel_time_runs_out_are_unknown_not_clean(cli):
    path = FIXTURES / "cuda" / "matmul_tiled_fixed.cu"
    code, report, err = cli("check", str(path), *fixture_args(path), "--kernel-timeout", "0.000001",
                            "--format", "json")
    assert code == 0, err   # unknown is a warning
    unknown = [f for f in report["findings"] if f["rule"] == "unknown"]
    assert unknown and all("time limit" in f["message"] for f in unknown)
    assert [k["status"] for k in report["kernels"]] == ["unknown"]


def test_within_the_time_limit_the_verdict_is_unchanged(cli):
    path = FIXTURES / "cuda" / "matmul_tiled_fixed.cu"
    code, report, _ = cli("check", str(path), *fixture_args(path), "--kernel-timeout", "600", "--format", "json")
    assert code == 0 and report["findings"] == []


def test_a_query_at_the_edge_of_the_budget_is_asked_again_with_more():
    """An undecided query is asked once more at ESCALATE times the budget, for the first
    ESCALATIONS of a kernel. Factoring 10403 = 101 * 103 is past 700,000 units of Z3's resource
    limit and within 2,800,000 (the limit is deterministic: the same on every run)."""
    import z3

    from analyzer.analysis.pairing.hazards import PairAnalysis
    from analyzer.analysis.decision.solver import fresh_context
    from analyzer.analysis.decision.solver_budget import ESCALATE, ESCALATIONS, SolverBudget

    # Z3's search depends on the terms its context has seen: a context of the test's own, as a
    # kernel gets, whatever the tests before it analysed.
    fresh_context()

    class Budget(SolverBudget):
        def __init__(self, escalations):
            self.rlimit, self.clock_ms, self.timeout_ms = 700_000, 600_000, 233
            self.deadline, self.cache, self.escalations = None, None, escalations

    x, y = z3.Ints("x y")
    factoring = [x * y == 10403, x > 1, y > 1, x <= y]
    assert ESCALATE * 700_000 >= 2_560_000 and ESCALATIONS >= 1
    assert Budget(0)._solve(factoring, PairAnalysis())[0] == z3.unknown
    budget = Budget(1)
    res, solver = budget._solve(factoring, PairAnalysis())
    assert res == z3.sat and solver.model().eval(x).as_long() == 101
    assert budget.escalations == 0 and budget.rlimit == 700_000     # the budget is back
    assert budget._solve(factoring, PairAnalysis())[0] == z3.unknown   # none left


def test_a_kernel_whose_every_query_runs_to_its_budget_stops_near_its_time_limit(cli):
    """A random kernel of the differential campaign (seed 20261274) whose pairs each ask queries
    that run to their budget (22 s without a limit; seed 20261221's, 56 s at --kernel-timeout 5
    before each query's clock was cut to what is left of the kernel's time, is now decided in a
    second and a half). What is left undecided is unknown."""
    path = Path(__file__).parent / "data" / "kernel_timeout" / "slow_pairs.cu"
    t0 = time.process_time()
    code, report, err = cli("check", str(path), *fixture_args(path), "--kernel-timeout", "2", "--format", "json")
    spent = time.process_time() - t0
    assert code in (0, 1), err
    assert [k["status"] for k in report["kernels"]] == ["unknown"]
    assert any(f["rule"] == "unknown" and "time limit" in f["message"] for f in report["findings"])
    assert spent < 12, f"{spent:.1f} s of CPU at --kernel-timeout 2"


def test_fix_hint_re_analyses_spend_what_is_left_of_the_kernel_time(cli, monkeypatch):
    """A fix hint is re-checked by analysing the kernel again with the change: those re-analyses
    share the kernel's time limit (a campaign kernel's two hints took it to four times
    --kernel-timeout, each re-analysis with a limit of its own)."""
    from analyzer import pipeline

    limits, real = [], pipeline.analyse_kernel

    def recording(kernel, options, *args, **kwargs):
        if len(args) >= 3 and args[2] is not None:      # a re-analysis (shares the query cache)
            limits.append(options.kernel_timeout_s)
        return real(kernel, options, *args, **kwargs)

    monkeypatch.setattr(pipeline, "analyse_kernel", recording)
    path = FIXTURES / "cuda" / "matmul_tiled.cu"    # its missing barriers get re-checked hints
    code, report, err = cli("check", str(path), *fixture_args(path), "--kernel-timeout", "60", "--format", "json")
    assert code == 1, err
    assert any(f["fix"] and f["fix"]["removes"] for f in report["findings"])
    # Each started after the kernel's own analysis, with only what was left of its 60 s.
    assert limits and all(limit < 60 for limit in limits)
