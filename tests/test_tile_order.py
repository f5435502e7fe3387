"""The tile a persistent kernel's work-list walk stands on (analyzer/analysis/tile_order.py): the
walk is proven only when every condition of the module holds, and a broken one leaves the
collision between blocks reported."""

import pytest

from analyzer.analysis.tile_order import find_walks
from analyzer.frontend import lower_source
from analyzer.pipeline import Options, check_text
from conftest import FIXTURES

WALK = (FIXTURES / "cuda" / "persistent_walk.cu").read_text()


def _walks(src: str):
    (kernel,) = lower_source(src, "cuda", "k.cu")
    return [(w.step, w.start.name, w.batch[1], w.tile[1]) for w in find_walks(kernel)]


def _grid_findings(src: str, blocks: int = 8):
    (result,) = check_text(src, "cuda", "k.cu", (32,), (blocks,), {}, Options(hints="off", scope="grid"), "k.cu")
    return [f.rule for f in result.findings]


def test_the_work_list_walk_is_proven_and_its_blocks_stay_apart():
    assert _walks(WALK) == [(8, "bid.x", "batch", "tile")]
    assert _grid_findings(WALK) == []


def test_more_blocks_than_the_step_share_tiles():
    # Blocks b and b + 8 of 16 start on tiles 8 apart, and each moves on by 8: the same tiles.
    # (A warning: whether they meet depends on the batches' sizes, which the index map holds.)
    assert _grid_findings(WALK, blocks=16) == ["write-after-write"]


BROKEN = {
    # The size of a batch must be the batch's alone: here it differs between blocks.
    "size depends on the block": ("tiles[0] = indptr[b + 1] - indptr[b];",
                                  "tiles[0] = indptr[b + 1] - indptr[b] + blockIdx.x;"),
    # The size before the loop must be the first batch's.
    "first size is another batch's": ("tiles[0] = indptr[1] - indptr[0];", "tiles[0] = indptr[2] - indptr[1];"),
    # A batch moved past without its size read leaves a stale size in the next step.
    "size not refreshed": ("if (batch[0] < batches) {\n                int b", "if (batch[0] < 2) {\n                int b"),
    # Threads of one block starting on different tiles are not one walk per block.
    "tile starts per thread": ("tile[0] = blockIdx.x;", "tile[0] = blockIdx.x + threadIdx.x;"),
    # A jump in the step: the batch moves without the tile moving back.
    "a continue in the step": ("tile[0] = tile[0] - tiles[0];", "if (tiles[0] == 7) continue;\n            tile[0] = tile[0] - tiles[0];"),
    # The tile must only grow by one constant outside the step.
    "two steps": ("tile[0] = tile[0] + 8;", "tile[0] = tile[0] + 8 + (batch[0] & 1);"),
}


@pytest.mark.parametrize("name", sorted(BROKEN))
def test_a_broken_condition_leaves_no_proof(name):
    old, new = BROKEN[name]
    assert old in WALK
    src = WALK.replace(old, new)
    assert _walks(src) == []


@pytest.mark.parametrize("name", ["size depends on the block", "first size is another batch's", "size not refreshed"])
def test_without_the_proof_blocks_may_share_a_tile(name):
    old, new = BROKEN[name]
    assert "write-after-write" in _grid_findings(WALK.replace(old, new))


def test_a_collision_between_blocks_of_the_walk_has_a_witness_that_replays():
    """With 16 blocks, blocks b and b + 8 meet on one tile. The query keeps the walk's state as
    unknown functions; walk_witness.py ties it to what the walk computes from the model's index map,
    so the witness is one the concrete replay follows (it did not: "witness not validated")."""
    (result,) = check_text(WALK, "cuda", "k.cu", (32,), (16,), {}, Options(hints="off", scope="grid"), "k.cu")
    (f,) = result.findings
    assert f.rule == "write-after-write" and f.witness["replayed"] is True
    assert not any("not validated" in n for n in f.notes)
    w = f.witness
    assert (w["first_block"][0] - w["second_block"][0]) % 8 == 0
