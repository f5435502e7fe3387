"""WebGPU grids packed into x and z (analyzer/tvm/build.py, `webgpu_dispatch`): a WebGPU build's
kernels get the launch TVM's web runtime makes (web/src/webgpu.ts): an x extent of 2**16 or more
halved, rounding up, into x while z doubles, and `podArgs.packGridDimX` = the lowered x extent.
TVM's WGSL returns when `blockIdx.z * gridDim.x + blockIdx.x > packGridDimX`: with a padded
launch (x * z above the lowered extent) the block whose index equals the lowered extent runs too
(TVM 0.27), which `rotated_tiles` (tests/builders/grid_races.py) turns into a race with block 0."""

import pytest

from analyzer import ir
from analyzer.pipeline import Options, built_kernels, check_built
from analyzer.tvm.build import webgpu_dispatch
from conftest import built

SPEC = "builders.grid_races:rotated_tiles"


@pytest.mark.parametrize("x,grid", [(16, (16, 1)), (65535, (65535, 1)), (65536, (32768, 2)), (65537, (32769, 2)),
                                    (200000, (50000, 4)), (3 * 65536 + 1, (49153, 4))])
def test_dispatch_packs_x_as_the_web_runtime_does(x, grid):
    defs = {"*": {"n": ir.Param("m")}}
    out = webgpu_dispatch({"blockIdx.x": x, "threadIdx.x": 64}, "k", defs)
    assert (out["blockIdx.x"], out.get("blockIdx.z", 1)) == grid and out["threadIdx.x"] == 64
    assert grid[0] * grid[1] >= x and grid[0] < 1 << 16
    assert defs["k"] == {"n": ir.Param("m"), "packGridDimX": ir.Const(x)}


@pytest.mark.parametrize("extents", [{"blockIdx.x": "n", "threadIdx.x": 64},
                                     {"blockIdx.x": 70000, "blockIdx.z": 2, "threadIdx.x": 64}])
def test_symbolic_x_or_own_z_keeps_the_lowered_extents(extents):
    defs = {}
    assert webgpu_dispatch(dict(extents), "k", defs) == extents and defs == {}


def _check(blocks, target="webgpu"):
    mod = built(SPEC, {"blocks": blocks}, target)
    (kernel,) = built_kernels(mod)
    results = check_built(mod, Options(timeout_ms=5000, hints="off"))
    assert [r.status for r in results if r.status == "unknown"] == []
    return kernel, [f for r in results for f in r.findings]


@pytest.mark.parametrize("blocks,grid", [(16, (16, 1, 1)), (65536, (32768, 1, 2))])
def test_unpadded_launch_covers_the_lowered_grid_and_no_more(blocks, grid):
    kernel, findings = _check(blocks)
    assert tuple(kernel.grid_dim[d] for d in "xyz") == grid
    assert kernel.definitions["packGridDimX"] == ir.Const(blocks)
    assert findings == []


def test_padded_launch_runs_one_block_past_the_lowered_grid():
    """65537 blocks go out as 32769 x 2 = 65538 workgroups; the guard (`>`, not `>=`) lets the
    last one, block index 65537 = (32768, 0, 1), write tile (65537 + 1) % 65537 = 1, block 0's."""
    kernel, findings = _check(65537)
    assert tuple(kernel.grid_dim[d] for d in "xyz") == (32769, 1, 2)
    (f,) = findings
    w = f.witness
    assert f.rule == "write-after-write" and f.second.buffer == "B"
    assert sorted(map(tuple, w["blocks"])) == [(0, 0, 0), (32768, 0, 1)]
    assert w["params"] == {"packGridDimX": 65537} and w["replayed"] is True
    # The same kernel for CUDA launches exactly its 65537 blocks: no race.
    assert _check(65537, "cuda")[1] == []
