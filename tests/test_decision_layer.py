"""The decision layer (analyzer/analysis/decision/decide.py): integer sets and Z3 give the same answers.

Real queries, as the analysis asks them with every query sent to Z3 (`decide.RECORD`), from
random kernels of the soundness campaign's generator (benchmarks/differential.py) and from
kernels TVM builds for the corpus, are answered by ISL too: no disagreement on sat/unsat, and
every ISL point is a model of the Z3 constraints (evaluated by Z3). The analysis's findings are
the same with the layer on and off, and under KERNELRACE_DECISION_CHECK every ISL answer it uses
is checked as it is used.
"""

import importlib.util
import json
import os
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
import z3

from analyzer import ir
from analyzer.analysis.decision import decide
from analyzer.analysis.decision.solver import Encoder

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("differential", ROOT / "benchmarks" / "differential.py")
dt = sys.modules.setdefault("differential", importlib.util.module_from_spec(_spec))
if not hasattr(dt, "run_campaign"):
    _spec.loader.exec_module(dt)

SEED = 20261207
KERNELS = 16


def _recorded(run) -> list:
    """The queries Z3 decides while `run()` analyses, with its verdicts (the layer off)."""
    saved = decide.ENABLED, decide.RECORD
    decide.ENABLED, decide.RECORD = False, []
    try:
        run()
        return decide.RECORD
    finally:
        decide.ENABLED, decide.RECORD = saved


def _compare(queries: list) -> dict:
    d = decide.Decider()
    out = {"sat": 0, "unsat": 0, "declined": 0, "disagree": [], "point fails": []}
    for constraints, res in queries:
        if res == z3.unknown:
            continue
        got = d.presburger(constraints)
        if got is None:
            out["declined"] += 1
            continue
        if (got.result == decide.SAT) != (res == z3.sat):
            out["disagree"].append((res, got.result, constraints))
        elif got.result == decide.SAT and not decide.holds_at(got, constraints):
            out["point fails"].append((got.point, constraints))
        out[got.result] += 1
    return out


def _random_kernel_queries(kernels: int) -> list:
    queries: list = []
    workdir = Path(tempfile.mkdtemp())

    def body(case):
        em = dt.emit(case.kernel, "cuda", dt.header(case, "cuda", "symbolic"))
        subject = dt.Subject(em, case.kernel.block, workdir)
        used = dt.used_params(case.kernel)
        for defines in ({}, {p: v for p, v in case.values if p in used}):
            queries.extend(_recorded(lambda: subject.check(defines, dt.analyser_options(5.0))))

    dt.run_hypothesis(SEED, kernels, body)
    return queries


def _random_kernels_agree(kernels: int) -> None:
    out = _compare(_random_kernel_queries(kernels))
    assert out["disagree"] == [] and out["point fails"] == []
    # The layer decides a share of these queries (a test that fails if it declined them all).
    assert out["sat"] > 0 and out["unsat"] > 0, out


def test_random_kernels_queries_agree_slice():
    """The first three of the random kernels below (the default run's pinned slice)."""
    _random_kernels_agree(3)


@pytest.mark.slow
def test_random_kernels_queries_agree():
    _random_kernels_agree(KERNELS)


@pytest.mark.slow
def test_corpus_kernel_queries_agree():
    from analyzer.pipeline import Options, check_built, with_builtin_contracts
    from analyzer.tvm.corpus import corpus_builds
    queries: list = []
    for b in corpus_builds([128], ["cuda"], ["merge_state", "copy_single_page", "_attention_decode"]):
        options = with_builtin_contracts(Options(), b.spec, b.module.params)
        queries += _recorded(lambda: check_built(b.module, options))
    out = _compare(queries)
    assert out["disagree"] == [] and out["point fails"] == []
    assert out["sat"] + out["unsat"] > 0


def _encoder(block=(64, 1, 1)) -> Encoder:
    k = ir.Kernel(name="k", file="k.cu", lang="cuda", params=["n"], buffers={}, body=[],
                  block_dim=dict(zip("xyz", block)))
    return Encoder(k, 32)


@pytest.mark.parametrize("op", ["/", "%", "fdiv", "fmod", ">>"])
@pytest.mark.parametrize("value", [-9, -8, -1, 0, 7, 13])
def test_c_division_semantics_translate_exactly(op, value):
    """C's truncating `/` and `%`, TIR's flooring ones and an arithmetic shift, as the encoder
    spells them, on negative and positive values: ISL's answer is Z3's, value by value."""
    enc = _encoder()
    n = enc.param("n")
    e = enc.term(ir.BinOp(op, ir.Param("n"), ir.Const(4 if op != ">>" else 2)), 1)
    expected = z3.simplify(z3.substitute(e, (n, z3.IntVal(value)))).as_long()
    d = decide.Decider()
    for guess in (expected, expected + 1, expected - 1):
        got = d.presburger([n == value, e == guess])
        assert got is not None and got.result == (decide.SAT if guess == expected else decide.UNSAT), (op, value, guess)


def test_opaque_values_keep_congruence():
    """Two applications of a function with equal arguments are equal (Ackermann's constraints):
    without them, ISL would find a point Z3 does not."""
    x, y = z3.Ints("x y")
    f = z3.Function("load", z3.IntSort(), z3.IntSort())
    d = decide.Decider()
    assert d.presburger([x == y, f(x) != f(y)]).result == decide.UNSAT
    got = d.presburger([x >= 0, x < 4, y == x + 1, f(x) > f(y), f(f(x)) == 3])
    assert got.result == decide.SAT and decide.holds_at(got, [x >= 0, x < 4, y == x + 1, f(x) > f(y), f(f(x)) == 3])


def test_products_and_bit_vectors_go_to_z3():
    x, y = z3.Ints("x y")
    d = decide.Decider()
    assert d.presburger([x * y == 6, x > 1]) is None
    assert d.presburger([z3.BV2Int(z3.Int2BV(x, 64) & z3.Int2BV(y, 64)) == 1]) is None
    assert d.presburger([x * 4 * 2 == y, y == 9]).result == decide.UNSAT   # constants multiply out


def test_project_onto_names():
    x, n = z3.Ints("x n")
    s = decide.project([x >= 0, x < n, x == 5], ["n"])
    assert str(s.coalesce()) == "[p0_] -> {  : p0_ >= 6 }"


FIXTURES = ["cuda/double_buffer.cu", "cuda/double_buffer_fixed.cu", "cuda/divergent_barrier.cu",
            "cuda/back_to_back_barriers.cu", "cuda/atomic_ticket_fixed.cu"]


def _findings(path: Path, mode: str) -> str:
    first = path.read_text().splitlines()[0]
    args = shlex.split(first.split("kernelrace-args:", 1)[1]) if "kernelrace-args:" in first else []
    env = {**os.environ, "KERNELRACE_DECISION": mode, "KERNELRACE_DECISION_CHECK": "1"}
    done = subprocess.run([sys.executable, "-m", "analyzer.cli", "check", str(path), *args, "--format", "json",
                           "--hints", "off"], capture_output=True, text=True, cwd=ROOT, env=env)
    assert done.returncode in (0, 1), done.stderr
    report = json.loads(done.stdout)
    return json.dumps({"findings": report["findings"], "kernels": report["kernels"]}, sort_keys=True)


# Two in the default run, the rest in the slow set (each runs the CLI twice in a subprocess).
@pytest.mark.parametrize("name", [pytest.param(n, marks=[] if i < 2 else [pytest.mark.slow])
                                  for i, n in enumerate(FIXTURES)])
def test_findings_are_the_same_with_the_layer_on(name):
    """The same report (rules, locations, witnesses, conditions) with every query sent to Z3 and
    with the layer on, each ISL answer checked as the analysis uses it (KERNELRACE_DECISION_CHECK)."""
    path = ROOT / "tests" / "fixtures" / name
    assert _findings(path, "isl") == _findings(path, "z3")
