"""A pair whose accesses would be bounded (out_of_bounds.py) is asked first without the bounds:
apart there is apart in them and answers the out-of-bounds question too, so such a pair costs one
overlap query, not one in bounds and one outside (vello's `flatten`: 235 of 236 pairs, each asked
twice). The verdicts are the fixtures' (`wgsl/apart_without_bounds*`, `wgsl/out_of_bounds*`)."""

from analyzer.analysis.pairing.races import PairChecker
from analyzer.pipeline import Options, check_text
from conftest import FIXTURES


def _asked(monkeypatch, name):
    """(result, [bounded of each overlap query asked of the solver]) for a WGSL fixture."""
    asked = []
    apart = PairChecker._apart_by_solver

    def recording(self, a, b, out):
        asked.append(self.bounded)
        return apart(self, a, b, out)

    monkeypatch.setattr(PairChecker, "_apart_by_solver", recording)
    path = FIXTURES / "wgsl" / name
    (result,) = check_text(path.read_text(), "wgsl", name, None, None, {}, Options(hints="off"), str(path))
    return result, asked


def test_a_pair_apart_without_bounds_is_asked_once(monkeypatch):
    result, asked = _asked(monkeypatch, "apart_without_bounds_fixed.wgsl")
    assert result.findings == []
    # every pair the solver-free proof left, once, without the bounds (the old order asked each in
    # bounds first, then again outside them)
    assert asked and not any(asked)


def test_a_pair_apart_only_in_bounds_is_still_asked_in_them(monkeypatch):
    result, asked = _asked(monkeypatch, "out_of_bounds.wgsl")
    assert [f.rule for f in result.findings] == ["out-of-bounds"]
    # without the bounds: overlapping (asked once, its answer reused for the out-of-bounds
    # question); then in bounds: apart
    assert asked == [False, True]
