"""A solver call that fails (Z3Exception: no model, canceled) leaves its kernel `unknown` with the
solver's reason, never an internal error (exit 2) and never clean; and a witness kept in bounds
keeps the model its solver found before a refused wish (issue 42: ncnn's gemm_sg asked again
after the wish, the check ended canceled, and `model()` raised)."""

import json

import z3

from analyzer.analysis.pairing import out_of_bounds
from conftest import FIXTURES, cli_in_process

CORNERS = FIXTURES / "vulkan" / "witness_corners.comp"


def _check(path) -> tuple[int, dict, str]:
    code, out, err = cli_in_process(["check", str(path), "--no-cache", "--no-config", "-j", "1", "--format", "json"])
    return code, (json.loads(out) if code in (0, 1) else {}), err


def test_refused_corner_wish_keeps_the_two_threads_witness(monkeypatch):
    # The block's first and last invocations cannot both keep `tile[lid * 2 + shift - 1000]` in
    # bounds: the wish is refused, and the witness found with the two threads' facts stands.
    refused = []
    real = out_of_bounds.OutOfBounds._executed_in_bounds

    def spy(self, solver, model, a, b):
        found = real(self, solver, model, a, b)
        refused.append(found[2] == 1 and bool(found[1]))
        return found

    monkeypatch.setattr(out_of_bounds.OutOfBounds, "_executed_in_bounds", spy)
    code, report, err = _check(CORNERS)
    assert code == 1, err
    assert any(refused)
    (race,) = report["findings"]
    w = race["witness"]
    assert race["rule"] == "write-after-write" and w["replayed"]
    shift = w["params"]["shift"]
    for t in (w["first_thread"][0], w["second_thread"][0]):
        assert 0 <= t * 2 + shift - 1000 < 64


def test_a_failed_solver_call_is_the_kernel_unknown_with_its_reason(monkeypatch):
    def fails(self, solver, model, a, b):
        raise z3.Z3Exception("model is not available")

    monkeypatch.setattr(out_of_bounds.OutOfBounds, "_executed_in_bounds", fails)
    code, report, err = _check(CORNERS)
    assert "internal error" not in err
    assert code in (0, 1), err
    (kernel,) = report["kernels"]
    assert kernel["status"] == "unknown"
    (finding,) = [f for f in report["findings"] if f["rule"] == "unknown"]
    assert "a solver call failed (model is not available)" in finding["message"]


def test_z3_reason_reads_the_bytes_z3_raises():
    from analyzer.pipeline import _z3_reason

    assert _z3_reason(z3.Z3Exception(b"there is no current model")) == "there is no current model"
