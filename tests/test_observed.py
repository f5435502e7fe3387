"""Pairs the solver cannot decide, looked for in a run of the block (analyzer/analysis/witness/observed.py).

A bitonic sort's `tid ^ stride`, with `stride` shifted by two loop counters, kept some of its
shared-memory pairs past the small budget these tests give (at the default budget the solver
decides them all: power_bits.py); the first test leaves every query undecided, whichever the
solver decides. Without its inner barrier the sort races at once in a run: for
those pairs kernelrace reports that race, with the run's threads, iterations and element, instead
of `unknown`. With the barrier, the run shows nothing and the pairs stay unknown, never clean.
"""

import json

import z3
from conftest import TESTS, cli_in_process

from analyzer.analysis.decision.queries import Answer
from analyzer.analysis.decision.solver_budget import SolverBudget
from analyzer.analysis.stated import contracts
from analyzer.analysis.witness.observed import Observation
from analyzer.frontend import lower_source

SORTS = TESTS / "handwritten" / "cuda"
# A small budget: the pairs are out of it sooner; what is asked of the run is the same.
FAST = ["--block-dim", "64", "--timeout", "0.05", "--hints", "off", "--format", "json"]


def _report(path) -> dict:
    code, out, err = cli_in_process(["check", str(path), *FAST])
    assert code in (0, 1), err
    return json.loads(out)


def _address(line_text: str, col: int, tid: int, stride: int) -> int:
    """The element of `s` the access at `col` of the sort's line reads or writes for thread `tid`."""
    return tid ^ stride if line_text[col - 1:].startswith("s[ixj]") else tid


def test_the_sort_without_its_barrier_races_in_a_run_with_the_runs_witness(monkeypatch):
    # Every query out of its budget, as on a slower solver: which pairs the small budget leaves
    # undecided moves with the encoding (the merged analysis of 2026-12-06 decided them all).
    monkeypatch.setattr(SolverBudget, "_solve_once",
                        lambda self, constraints, out, live, tactic="preprocess", verdict=False: (z3.unknown, Answer(z3.unknown, None, "budget")))
    path = SORTS / "bitonic_sort_shared_no_sync.cu"
    lines = path.read_text().splitlines()
    races = [f for f in _report(path)["findings"] if f["rule"] in ("read-after-write", "write-after-read",
                                                                   "write-after-write")
             and f["first"]["buffer"] == "s"]
    assert races and all(f["severity"] == "error" for f in races)
    seen = [f for f in races if "observed" in f["witness"]]
    assert seen, "no pair was left to the run"
    for f in seen:
        assert f["witness"]["observed"] == {"block": [0, 0, 0], "seed": 0}
        assert any("seen in a run" in n for n in f["notes"])
    for f in races:     # the run's witnesses and the solver's alike
        w = f["witness"]
        assert w["replayed"]
        # The witness is the program's: each thread's loop iterations give its size and stride,
        # and the access at its line and column reaches the element named, in one barrier interval.
        assert w["first_iterations"]["9"] == w["second_iterations"]["9"]
        for side, thread, iters in (("first", w["first_thread"], w["first_iterations"]),
                                    ("second", w["second_thread"], w["second_iterations"])):
            size = 2 << iters["9"]
            stride = (size // 2) >> iters["10"]
            loc = f[side]
            assert _address(lines[loc["line"] - 1], loc["col"], thread[0], stride) == w["element"]
        assert w["first_thread"] != w["second_thread"]


def test_the_sort_with_its_barrier_stays_unknown_not_clean_and_not_racy():
    report = _report(SORTS / "bitonic_sort_shared.cu")
    rules = {f["rule"] for f in report["findings"]}
    assert "unknown" in rules
    assert not rules & {"read-after-write", "write-after-read", "write-after-write"}


def test_a_run_outside_a_declared_size_is_not_gone_by(tmp_path):
    # 128 threads on a 64-element array: the run stores past its end, which the analysis assumes
    # never happens; what that run saw is no witness.
    src = """
__global__ void k(int *out) {
    __shared__ int s[64];
    s[threadIdx.x] = 1;
    out[threadIdx.x] = s[threadIdx.x ^ 1];
}
"""
    (kernel,) = lower_source(src, "cuda", "k.cu")
    kernel.block_dim.update(x=128, y=1, z=1)
    seen = Observation(kernel, [], {}, {})
    seen.make()
    assert seen.made and not seen.races and "outside" in seen.failure
    kernel.block_dim.update(x=64)
    seen = Observation(kernel, [], {}, {})
    seen.make()
    assert seen.failure is None and seen.races     # in bounds: the read of a neighbour's store


def test_a_block_extent_not_given_means_no_run():
    (kernel,) = lower_source("__global__ void k(int *a) { a[threadIdx.x] = 0; }", "cuda", "k.cu")
    kernel.block_dim.clear()
    seen = Observation(kernel, [], {}, {})
    seen.make()
    assert not seen.races and seen.failure == "a block extent is not given"


def test_a_parameter_the_run_picks_stays_inside_its_range_contract():
    # Every thread writes a[tid / n]: at the default n (the block's 64 threads) all write a[0];
    # `n:range=1..1` says n is 1, where each thread has its own element.
    (kernel,) = lower_source("__global__ void k(int *a, int n) { a[threadIdx.x / n] = threadIdx.x; }", "cuda", "k.cu")
    kernel.block_dim.update(x=64, y=1, z=1)
    free = Observation(kernel, [], {}, {})
    free.make()
    assert free.races and free.params == {"n": 64}
    bounded = Observation(kernel, [(contracts.parse("n:range=1..1"), contracts.PARAM + "n")], {}, {})
    bounded.make()
    assert bounded.failure is None and not bounded.races and bounded.params == {"n": 1}


def test_a_kernel_with_a_declared_shape_gets_no_run():
    # TVM's buffers declare their shapes, and the analysis assumes each index inside its
    # dimension: a flattened offset cannot show a row's overflow, so no run is gone by.
    (kernel,) = lower_source("__global__ void k(int *a) { a[threadIdx.x / 2] = threadIdx.x; }", "cuda", "k.cu")
    kernel.block_dim.update(x=64, y=1, z=1)
    kernel.buffers["a"].strides = (8,)
    seen = Observation(kernel, [], {}, {})
    seen.make()
    assert not seen.races and "declared shape" in seen.failure
