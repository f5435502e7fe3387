"""The race that motivated kernelrace: TVM's merge_state_inplace, built for real with TVM."""

import pytest

from analyzer.tvm.corpus import MERGE_STATE

PARAMS = ["--param", "num_heads=8", "--param", "v_dtype=float16"]


@pytest.mark.parametrize("target", ["cuda", "metal"])
@pytest.mark.parametrize("head_dim", [128, 256, 512])
def test_seed_race_is_write_after_read_on_S(cli, target, head_dim):
    code, report, err = cli("lint", MERGE_STATE, "--target", target, "--param", f"head_dim={head_dim}",
                            *PARAMS, "--format", "json")
    assert code == 1, err
    errors = [f for f in report["findings"] if f["severity"] == "error"]
    assert [(f["rule"], f["second"]["buffer"]) for f in errors] == [("write-after-read", "S")]
    (f,) = errors
    assert f["first"]["kind"] == "read" and f["second"]["kind"] == "write"
    assert f["second"]["memory"] == ("global" if target == "cuda" else "device")
    assert f["target"] == target and f["params"]["head_dim"] == head_dim
    w = f["witness"]
    # Same row of S: same threadIdx.y, same block; different threadIdx.x.
    assert w["first_thread"][1] == w["second_thread"][1]
    assert w["first_thread"][0] != w["second_thread"][0]
    if head_dim == 128:
        # bdx = 32: the row's threads form one warp, so only lockstep execution hides it.
        assert w["same_warp"]
        assert any("lockstep" in n for n in f["notes"])
    else:
        # bdx = 64 or 128: the witness places the two threads in different warps.
        assert not w["same_warp"] and w["first_warp"] != w["second_warp"]


FIXED = "builders.merge_state_fixed:merge_state_inplace_fixed"


def test_fixed_merge_state_has_no_race_on_cuda(cli):
    # __syncthreads() orders global memory too: no race and no barrier-scope warning.
    code, report, err = cli("lint", FIXED, "--target", "cuda",
                            "--param", "head_dim=128,256,512", *PARAMS, "--format", "json")
    assert code == 0, err
    assert report["findings"] == []
    assert report["summary"]["kernels"] == 3 and report["summary"]["clean"] == 3


def test_fixed_merge_state_on_metal_orders_the_threads_but_not_device_memory(cli):
    # TVM emits the fix's barrier as threadgroup_barrier(mem_flags::mem_threadgroup): the write of
    # S is no longer a race, but the barrier does not order the device-memory reads before it.
    code, report, err = cli("lint", FIXED, "--target", "metal",
                            "--param", "head_dim=128,256,512", *PARAMS, "--format", "json")
    assert code == 0, err
    assert [f for f in report["findings"] if f["severity"] == "error"] == []
    found = [(f["rule"], f["severity"], f["first"]["kind"], f["second"]["kind"], f["second"]["buffer"],
              f["second"]["memory"]) for f in report["findings"]]
    assert found == [("barrier-scope", "warning", "read", "write", "S", "device")] * 3
    for f in report["findings"]:
        assert "threadgroup_barrier(mem_flags::mem_threadgroup)" in f["message"]
        assert f["message"].endswith("use threadgroup_barrier(mem_flags::mem_device | mem_flags::mem_threadgroup)")
        w = f["witness"]
        assert w["first_thread"][1] == w["second_thread"][1] and w["second_thread"][0] == 0
        assert w["first_thread"][0] != 0
    assert report["summary"]["with_findings"] == 3 and report["summary"]["by_rule"] == {"barrier-scope": 3}


def test_text_output_shows_both_source_lines_and_the_witness(cli):
    code, out, _ = cli("lint", MERGE_STATE, "--target", "cuda", "--param", "head_dim=256", *PARAMS)
    assert code == 1
    assert "error[write-after-read]" in out
    assert "S_ptr[" in out                      # the emitted source lines are shown
    assert "witness: block" in out and "warp" in out
