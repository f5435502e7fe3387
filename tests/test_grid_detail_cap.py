"""Between blocks at most GRID_DETAIL_CAP collisions per buffer get a witness search; the rest
are still reported, as warnings whose note says so (issue 42: ncnn's gemm_sg spent seconds on
each of ~200 colliding store pairs)."""

import json

from analyzer.analysis.pairing.hazards import GRID_DETAIL_CAP
from conftest import cli_in_process

# Each thread's stores are its own within a block; between blocks the free `stride` lets
# two blocks' rows overlap, so every pair of the stores collides there.
KERNEL = """__global__ void rows(float *out, int stride) {{
  int i = blockIdx.x * stride + threadIdx.x * 16;
{stores}
}}
"""


def _grid_findings(tmp_path, n: int) -> list[dict]:
    src = tmp_path / f"rows{n}.cu"
    src.write_text(KERNEL.format(stores="\n".join(f"  out[i + {k}] = {k}.0f;" for k in range(n))))
    code, out, err = cli_in_process(["check", str(src), "--no-cache", "--no-config", "-j", "1", "--format", "json",
                                     "--block-dim", "32"])
    assert code == 1, err
    report = json.loads(out)
    assert report["summary"]["unknown"] == 0
    return [f for f in report["findings"] if f["witness"] and "second_block" in f["witness"]]


def test_past_the_cap_collisions_between_blocks_are_reported_unsearched(tmp_path):
    found = _grid_findings(tmp_path, 6)
    assert len(found) > GRID_DETAIL_CAP
    unsearched = [f for f in found if any("not searched for" in n for n in f["notes"])]
    assert unsearched and all(f["severity"] == "warning" for f in unsearched)
    assert len(found) - len(unsearched) >= GRID_DETAIL_CAP


def test_under_the_cap_every_collision_is_searched(tmp_path):
    found = _grid_findings(tmp_path, 2)
    assert 0 < len(found) <= GRID_DETAIL_CAP
    assert not any("not searched for" in n for f in found for n in f["notes"])
