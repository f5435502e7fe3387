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
