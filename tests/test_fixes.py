"""Fix hints: each race finding proposes a change, and the analysis re-checks it."""

import pytest

from analyzer.tvm.corpus import MERGE_STATE
from conftest import FIXTURES, fixture_args

PARAMS = ["--param", "num_heads=8", "--param", "v_dtype=float16"]


@pytest.mark.parametrize("target,barrier", [
    ("cuda", "__syncthreads();"),
    ("metal", "mem_flags::mem_device"),
    ("vulkan", "memoryBarrierBuffer(); barrier();"),
    ("opencl", "barrier(CLK_GLOBAL_MEM_FENCE | CLK_LOCAL_MEM_FENCE);"),
])
@pytest.mark.parametrize("head_dim", [128, 512])
def test_seed_hint_is_the_upstream_fix_and_removes_the_race(cli, target, barrier, head_dim):
    code, report, err = cli("lint", MERGE_STATE, "--target", target, "--param", f"head_dim={head_dim}",
                            *PARAMS, "--format", "json")
    assert code == 1, err
    (f,) = [f for f in report["findings"] if f["severity"] == "error"]
    fix = f["fix"]
    assert fix["removes"] is True
    # A barrier before the store, and the store left to one thread: every thread writes the same value.
    assert barrier in fix["text"] and "== 0" in fix["text"]
    line = f["second"]["origin"]["line"] if f["second"]["origin"] else f["second"]["line"]
    assert fix["line"] == line
    assert 'T.tvm_storage_sync("shared")' in fix["tir"]
    if target in ("metal", "vulkan", "opencl"):   # said with the TIR change: TVM builds only
        assert "device memory" in fix["tir"] and not fix["notes"]


@pytest.mark.parametrize("name", ["cuda/reduce_tree.cu", "cuda/matmul_tiled.cu", "metal/matmul_tiled.metal",
                                  "vulkan/tile_overwrite.comp", "opencl/reduce_tree.cl"])
def test_fixture_hints_remove_their_findings(cli, name):
    path = FIXTURES / name
    code, report, err = cli("check", str(path), *fixture_args(path), "--format", "json")
    assert code == 1, err
    races = [f for f in report["findings"] if f["rule"] in ("write-after-read", "read-after-write")]
    assert races and all(f["fix"] and f["fix"]["removes"] for f in races)


def test_a_race_inside_one_statement_gets_no_barrier_hint(cli):
    # counter[0] = counter[0] + 1 by every thread: no barrier placement separates the read from
    # the write of one statement; the hint, if any, must not claim to remove it.
    path = FIXTURES / "cuda" / "counter_increment.cu"
    code, report, _ = cli("check", str(path), *fixture_args(path), "--format", "json")
    assert code == 1
    for f in report["findings"]:
        assert f["fix"] is None or "insert" not in f["fix"]["text"] or not f["fix"]["removes"]


def test_text_report_prints_the_hint_and_its_verdict(cli):
    code, out, _ = cli("lint", MERGE_STATE, "--target", "cuda", "--param", "head_dim=256", *PARAMS)
    assert code == 1
    assert "fix: insert `__syncthreads();` before line" in out and "re-checked: removes the finding" in out


def test_findings_that_propose_one_change_share_its_reanalysis(monkeypatch):
    """The tree reduction's three races in one loop all propose the barrier at the end of its
    body: that changed kernel is analysed once, and each finding reads its verdict from it."""
    from analyzer.analysis.barriers import fixes
    from analyzer.pipeline import Options, check_file

    calls = []
    real = fixes._reanalysed
    monkeypatch.setattr(fixes, "_reanalysed", lambda *a: calls.append(a[5:7]) or real(*a))
    path = FIXTURES / "metal" / "reduce_tree.metal"
    findings = [f for r in check_file(str(path), None, (32, 4), None, {}, Options(hints="all"))
                for f in r.findings if f.fix is not None]
    end_of_body = [f for f in findings if "end of the enclosing block" in f.fix["text"]]
    assert len(end_of_body) == 3 and all(f.fix["removes"] for f in end_of_body)
    assert len(calls) == len(set(calls))   # each change analysed once
