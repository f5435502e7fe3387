"""The motivating race on Vulkan: TVM's merge_state_inplace built for the vulkan target, and the
upstream fix, whose barrier orders workgroup memory only."""

import pytest

from analyzer.tvm.build import FROM_GLSL
from analyzer.tvm.corpus import MERGE_STATE

PARAMS = ["--param", "num_heads=8", "--param", "v_dtype=float16"]
FIXED = "builders.merge_state_fixed:merge_state_inplace_fixed"


@pytest.mark.parametrize("head_dim", [128, 256, 512])
def test_seed_race_is_write_after_read_on_S_for_vulkan(cli, head_dim):
    code, report, err = cli("lint", MERGE_STATE, "--target", "vulkan", "--param", f"head_dim={head_dim}",
                            *PARAMS, "--format", "json")
    assert code == 1, err
    errors = [f for f in report["findings"] if f["severity"] == "error"]
    assert [(f["rule"], f["second"]["buffer"]) for f in errors] == [("write-after-read", "S")]
    (f,) = errors
    assert f["second"]["memory"] == "StorageBuffer" and f["second"]["file"].endswith(".spvasm")
    # The GLSL line each access came from, and where the SPIR-V came from.
    assert "S_ptr[" in f["first"]["origin"]["text"] and "S_ptr[" in f["second"]["origin"]["text"]
    assert FROM_GLSL in f["notes"]
    w = f["witness"]
    assert w["first_thread"][1] == w["second_thread"][1] and w["first_thread"][0] != w["second_thread"][0]
    assert w["first_warp"] is None   # no subgroup size is assumed on Vulkan


@pytest.mark.parametrize("target,expected", [
    ("vulkan", {("barrier-scope", "warning")}),
    ("metal", {("barrier-scope", "warning")}),
    ("cuda", set()),
])
def test_fixed_seed_needs_a_device_memory_barrier_on_vulkan_and_metal(cli, target, expected):
    code, report, err = cli("lint", FIXED, "--target", target, "--param", "head_dim=256", *PARAMS, "--format", "json")
    assert code == 0, err
    assert {(f["rule"], f["severity"]) for f in report["findings"]} == expected
    for f in report["findings"]:
        assert f["second"]["buffer"] == "S" and f["first"]["kind"] == "read" and f["second"]["kind"] == "write"
