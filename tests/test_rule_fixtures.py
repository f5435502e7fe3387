"""Each fixture carries its expected findings as `// expect: RULE` on the reported line.

A fixture fails on a missing finding and on an unexpected one, so a fixture without expectations
must be clean. Every racy fixture has a synchronised `_fixed` twin.
"""

import json
import re
from pathlib import Path

import pytest

from analyzer.analysis.pairing import races
from conftest import FIXTURES, Precomputed, cli_in_process, fixture_args

EXPECT = re.compile(r"(?://|;)\s*expect:\s*([a-z\-, ]+)")
FILES = sorted(p for p in FIXTURES.rglob("*") if p.suffix in (".cu", ".metal", ".cl", ".comp", ".spvasm", ".wgsl"))


def expectations(path: Path) -> set[tuple[int, str]]:
    out = set()
    for n, line in enumerate(path.read_text().splitlines(), 1):
        m = EXPECT.search(line)
        if m:
            out |= {(n, rule.strip()) for rule in m.group(1).split(",") if rule.strip()}
    return out


def _check(path: Path) -> tuple[int, dict | None, str]:
    # Every pair the solver-free disjointness proof settles is asked of the solver too: a fast
    # path that disagrees with it fails the fixture.
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(races, "CROSS_CHECK", True)
        # A generous solver budget: these expectations are about what races, not about how much
        # the solver may spend (a query of vulkan/reduce_tree.comp sits near the 1 s default).
        code, out, err = cli_in_process(["check", str(path), *fixture_args(path), "--timeout", "5", "--format", "json"])
    return code, (json.loads(out) if code in (0, 1) else None), err


def default_slice(files: list[Path]) -> set[Path]:
    """The fixtures the default run checks: per dialect and rule, the first fixture expecting that
    rule and its `_fixed` twin (58 of the 317 files in December 2026: every rule of every dialect reported and
    its fix seen clean). The slow set, which .ci/run also runs, checks the rest: the whole corpus is
    about 100 s of CPU, a third of the default run's budget of 3 minutes on two cores."""
    first: dict[tuple[str, str], Path] = {}
    for path in files:
        for _, rule in sorted(expectations(path)):
            first.setdefault((path.parent.name, rule), path)
    chosen = set(first.values())
    return chosen | {twin for p in chosen if (twin := p.with_name(p.stem + "_fixed" + p.suffix)).exists()}


SLICE = default_slice(FILES)
# The fixtures are checked two at a time, one per core, as the first case runs.
CHECKED = Precomputed(_check, ("path",))


@pytest.mark.xdist_group("rule_fixtures")   # one worker computes every case (conftest.Precomputed)
@pytest.mark.parametrize("path", [pytest.param(p, marks=() if p in SLICE else pytest.mark.slow) for p in FILES],
                         ids=lambda p: f"{p.parent.name}/{p.name}")
def test_fixture_findings_match_expectations(path, request):
    code, report, err = CHECKED(request)
    assert code in (0, 1), err
    # A compiled shader's findings sit on SPIR-V lines; its expectations on the GLSL lines.
    line = (lambda loc: loc["origin"]["line"]) if path.suffix == ".comp" else (lambda loc: loc["line"])
    got = {(line(f["second"]), f["rule"]) for f in report["findings"]}
    assert got == expectations(path)
    # Every witness replays on concrete values (analyzer/analysis/witness/replay.py).
    assert [f["message"] for f in report["findings"] if f["witness"] and not f["witness"].get("replayed", True)] == []
    # Only error findings fail the run; a fixture with warnings alone (barrier-scope) exits 0.
    assert code == (1 if any(f["severity"] == "error" for f in report["findings"]) else 0)


def test_the_default_slice_reports_every_rule_of_every_dialect():
    every = {(p.parent.name, rule) for p in FILES for _, rule in expectations(p)}
    assert {(p.parent.name, rule) for p in SLICE for _, rule in expectations(p)} == every
    assert len(SLICE) < len(FILES) / 3


def test_every_racy_fixture_has_a_fixed_twin():
    racy = [p for p in FILES if expectations(p) and not p.stem.endswith("_fixed")]
    twinless = {"stride_loop_neighbour"}
    missing = [p.name for p in racy if p.stem not in twinless
               and not p.with_name(p.stem + "_fixed" + p.suffix).exists()]
    assert not missing
