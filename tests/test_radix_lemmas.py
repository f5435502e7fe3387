"""The mixed-radix lemmas (analyzer/analysis/decision/radix_lemmas.py): the split is an identity,
every lemma holds at every small point (brute force), and they are what decides a collision of
rows of a parameter's length within the budget."""

import itertools

import pytest
import z3

from analyzer.analysis.decision import radix_lemmas
from conftest import FIXTURES


def test_split_is_an_identity_and_every_lemma_holds_for_fixed_lengths():
    b1, b2, t1, t2, x1, x2, w, n = z3.Ints("b1 b2 t1 t2 x1 x2 w n")
    # (b*n + t)*w + x against the same shape of the other thread: rows of rows.
    i1 = (b1 * n + t1) * w + x1
    i2 = (b2 * n + t2) * w + x2
    r, c = radix_lemmas.split(i1, w)
    lemmas = radix_lemmas.lemmas(i1, i2, 1, 2)
    assert len(lemmas) >= 2      # the rows split again by n
    for length, rows in itertools.product(range(-1, 5), range(-1, 4)):
        # With both lengths fixed every term is linear: Z3 proves each fact for all integers.
        fixed = [(w, z3.IntVal(length)), (n, z3.IntVal(rows))]
        for fact in [i1 == r * w + c] + lemmas:
            s = z3.Solver()
            s.add(z3.Not(z3.substitute(fact, *fixed)))
            assert s.check() == z3.unsat, (fact, length, rows)


def test_no_shared_factor_no_lemma():
    a, b, c, d = z3.Ints("a b c d")
    assert radix_lemmas.lemmas(a * b + c, d * c + a, 1, 1) == []


@pytest.mark.parametrize("lemmas, verdict", [(radix_lemmas.MAX_LEMMAS, "clean"), (0, "unknown")])
def test_rows_of_a_parameters_length_are_decided_by_the_lemmas(cli, monkeypatch, lemmas, verdict):
    monkeypatch.setattr(radix_lemmas, "MAX_LEMMAS", lemmas)
    path = FIXTURES / "cuda/param_row_image_fixed.cu"
    code, report, err = cli("check", str(path), "--timeout", "0.25", "--format", "json")
    (kernel,) = report["kernels"]
    assert kernel["status"] == verdict, (err, report)
