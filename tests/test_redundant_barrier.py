"""redundant-barrier against the ground truth of deleting barriers from the source.

A barrier the rule reports must be one whose deletion introduces no race; a barrier whose deletion
introduces a race must never be reported; and every reported barrier of a kernel can go at once.
"""

import dataclasses
from pathlib import Path

import pytest

from analyzer.analysis.execution.concurrency import build_cfg
from analyzer.analysis.execution.symbolic import SymbolicExecutor
from analyzer.analysis.pairing.races import OUT_OF_TIME, analyse_pairs
from analyzer.command.mutants import barrier_sites, check_mutants, delete_barrier, finding_keys, text_checker
from analyzer.frontend import lower_source
from analyzer.pipeline import Options, read_source
from conftest import FIXTURES, Precomputed, fixture_args

# Long: in the slow set, which .ci/run runs after the default run (pyproject.toml's markers).
pytestmark = pytest.mark.slow

OPTIONS = Options(hints="off", timeout_ms=5000)   # verdicts, not the solver budget, are under test
# Fixtures with a barrier statement in their text (one only a macro spells is no statement the
# barrier-deletion mutants can take out).
WITH_BARRIERS = sorted(p for p in FIXTURES.rglob("*") if p.suffix in (".cu", ".metal", ".cl", ".comp", ".spvasm")
                       and any(w in line for line in p.read_text().splitlines() if not line.lstrip().startswith("#")
                               for w in ("__sync", "_barrier(", "barrier()", "barrier(CLK_", "OpControlBarrier")))


def _block_dim(path: Path):
    args = fixture_args(path)
    return [int(x) for x in args[args.index("--block-dim") + 1].split(",")] if "--block-dim" in args else None


def _checker(path: Path):
    text, lang, name = read_source(str(path), None)
    return [(name, text)], lang, text_checker(lang, _block_dim(path))


def _mutants(path: Path):
    files, lang, check = _checker(path)
    return check_mutants(files, lang, check, OPTIONS)


# Each fixture's mutants are checked in one of two processes, one per core, as the first case runs.
MUTANTS = Precomputed(_mutants, ("path",))


@pytest.mark.xdist_group("redundant_barrier")   # one worker computes every case (conftest.Precomputed)
@pytest.mark.parametrize("path", WITH_BARRIERS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_reported_barriers_are_exactly_those_deletion_leaves_race_free(path, request):
    original, verdicts = MUTANTS(request)
    assert verdicts
    racy = any(f.severity == "error" for r in original for f in r.findings)
    for v in verdicts:
        where = f"{path.name}:{v.mutant.line}"
        if v.redundant:
            assert v.outcome == "no race", f"{where}: reported redundant, but deleting it races"
        if v.outcome == "race":
            assert not v.redundant, where
        # Where nothing races already, no barrier here shadows another: deletion is the whole truth.
        if not racy and v.outcome == "no race" and "back_to_back" not in path.name:
            assert v.redundant, f"{where}: deleting it leaves no race, but it is not reported"


def test_every_reported_barrier_can_go_at_once():
    path = FIXTURES / "cuda" / "back_to_back_barriers.cu"
    files, lang, check = _checker(path)
    original = check(files, OPTIONS)
    noted = [f.second for r in original for f in r.findings if f.rule == "redundant-barrier"]
    assert len(noted) == 1          # of two barriers back to back, one is reported
    (name, text), = files
    for loc in noted:
        text = delete_barrier(text, lang, loc.line, loc.col)
    assert not finding_keys(check([(name, text)], OPTIONS))
    # ... and deleting both is a race: the one left is needed.
    for line, col, _ in barrier_sites(text, lang, name):
        text = delete_barrier(text, lang, line, col)
    assert finding_keys(check([(name, text)], OPTIONS))


def test_mutants_keep_every_other_line_and_column():
    text = "void k() {\n  a[i] = 1;\n  __syncthreads();  // x\n  b = a[j];\n}\n"
    out = delete_barrier(text, "cuda", 3, 3)
    assert out.split("\n")[2] == "  " + " " * len("__syncthreads()") + ";  // x"
    assert [len(x) for x in out.split("\n")] == [len(x) for x in text.split("\n")]


def test_no_verdict_once_the_kernel_is_out_of_time():
    text = (FIXTURES / "cuda" / "redundant_barrier.cu").read_text()
    kernel, = lower_source(text, "cuda", "redundant_barrier.cu")
    kernel.block_dim = {"x": 256, "y": 1, "z": 1}
    ev = SymbolicExecutor(kernel).run()
    pairs = analyse_pairs(kernel, ev, build_cfg(kernel, ev.tracked_conditions), 1000)
    pairs.checker.deadline = 0.0    # the race pass finished; the kernel's time is now up
    verdicts = pairs.barrier_verdicts()
    assert verdicts and all(v.needed is None and v.reason == OUT_OF_TIME for v in verdicts)


def test_a_barrier_a_racing_pair_crosses_is_not_vouched_for(cli):
    # subgroupBarrier() orders no two invocations on Vulkan (no subgroup size is assumed), and the
    # pair it sits between already races: the rule says nothing of it.
    code, report, _ = cli("check", str(FIXTURES / "vulkan" / "subgroup_barrier.comp"), "--format", "json")
    assert code == 1
    assert {f["rule"] for f in report["findings"]} == {"read-after-write"}


def test_asking_exactly_first_changes_no_verdict(monkeypatch):
    # The pass expects the pairs it queries to collide and asks the exact query first (races.py,
    # `query`): the barrier fixtures get the verdicts of the usual order, cheap query first, every
    # order group asked (the mutant test above compares all fixtures with the ground truth).
    from analyzer.analysis.pairing.races import PairChecker

    def verdicts(path):
        files, lang, check = _checker(path)
        only = dataclasses.replace(OPTIONS, select=("redundant-barrier",))
        return [(f.second.line, f.message, f.notes) for r in check(files, only) for f in r.findings]

    paths = [p for p in WITH_BARRIERS if "barrier" in p.name]
    expecting = {p: verdicts(p) for p in paths}
    usual = PairChecker._query_groups
    monkeypatch.setattr(PairChecker, "_query_groups",
                        lambda self, *args, expect_hazard=False, **kw: usual(self, *args, **kw))
    assert sum(map(len, expecting.values())) >= 5
    for p in paths:
        assert verdicts(p) == expecting[p], p.name


def test_a_barrier_whose_pairs_already_race_asks_nothing():
    # When flag is false nothing orders s's write and the neighbour's read: a race. Without the
    # barrier, t's write and read collide too, a collision the solver would be asked for; but a
    # barrier is reported only when its removal lets nothing collide, which the racing pair already
    # rules out: no query is asked.
    text = ("__global__ void k(int *out, int flag) {\n"
            "  __shared__ int s[64];\n"
            "  __shared__ int t[64];\n"
            "  s[threadIdx.x] = 1;\n"
            "  if (flag) {\n"
            "    t[threadIdx.x] = 2;\n"
            "    __syncthreads();\n"
            "    out[threadIdx.x] = t[threadIdx.x ^ 1];\n"
            "  }\n"
            "  out[threadIdx.x] += s[threadIdx.x ^ 1];\n"
            "}\n")
    kernel, = lower_source(text, "cuda", "racing_barrier.cu")
    kernel.block_dim = {"x": 64, "y": 1, "z": 1}
    ev = SymbolicExecutor(kernel).run()
    pairs = analyse_pairs(kernel, ev, build_cfg(kernel, ev.tracked_conditions), 1000)
    assert {h.second.access.buffer for h in pairs.hazards} >= {"s"}   # the race pass's race
    asked = pairs.queries
    verdict, = pairs.barrier_verdicts()
    assert verdict.needed is None and "already race" in verdict.reason
    assert pairs.queries == asked
