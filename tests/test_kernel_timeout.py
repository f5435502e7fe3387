"""A per-kernel time limit: an over-long analysis ends in `unknown`, never in a hang or a clean verdict."""

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


def test_a_query_at_the_edge_of_the_budget_is_asked_again_with_more(monkeypatch):
    """Qwen2-7B's rope kernel (28 query heads, 4 KV heads): between two blocks, the write to `q` at
    `((bx*2 + (tx>>9)) / 9) * 3584 + ((bx*8 + (tx>>7)) % 36) * 128 + (tx & 127)` is undecided
    at the 1 s budget; asked again at ESCALATE times that budget it is decided: never colliding."""
    from analyzer.analysis import solver_budget
    from analyzer.pipeline import Options, check_built
    from analyzer.tvm.corpus import ROPE
    from conftest import built

    mod = built(f"{ROPE}:llama4_rope_with_position_map",
                dict(theta=10000.0, scale=1.0, head_dim=128, num_q_heads=28, num_kv_heads=4, dtype="bfloat16",
                     rope_scaling={}), "cuda")
    options = Options(hints="off")
    assert [f.rule for r in check_built(mod, options) for f in r.findings] == []
    monkeypatch.setattr(solver_budget, "ESCALATIONS", 0)
    monkeypatch.setattr("analyzer.analysis.races.ESCALATIONS", 0)
    assert [f.rule for r in check_built(mod, options) for f in r.findings] == ["unknown"]
