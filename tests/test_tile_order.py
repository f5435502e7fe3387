"""The tile a persistent kernel's work-list walk stands on (analyzer/analysis/execution/tile_order.py): the
walk is proven only when every condition of the module holds, and a broken one leaves the
collision between blocks reported."""

import pytest

from analyzer.analysis.execution.tile_order import find_walks, step_lemma
from analyzer.analysis.witness import walk_witness
from analyzer.analysis.witness.walk_plan import plan_of, spans
from analyzer.frontend import lower_source
from analyzer.pipeline import Options, check_built, check_text, with_builtin_contracts
from conftest import FIXTURES, built

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


def test_the_step_lemma_holds_for_every_small_value():
    # The grid pass adds it to its queries as a fact: a wrong one would hide races.
    import itertools

    import z3
    m1, m2 = z3.Ints("m1 m2")
    for c in range(1, 5):
        lemma = step_lemma(c * m1, c * m2, c)
        for v1, v2 in itertools.product(range(-4, 5), repeat=2):
            assert z3.is_true(z3.simplify(z3.substitute(lemma, (m1, z3.IntVal(v1)), (m2, z3.IntVal(v2))))), (c, v1, v2)


def test_mha_tree_attention_blocks_stay_apart_at_head_dim_96():
    """One query head per KV head (Phi-3: 32 and 32, head_dim 96): the output rows are the walk's
    tiles of 32 rows, and two blocks on one row stand on one tile, which the walk's fact refutes.
    Without the step lemma the refinement by q_indptr's order ran out of its budget, a warning."""
    spec = "tvm.relax.frontend.nn.llm.tree_attn:tree_attn"
    mod = built(spec, dict(h_kv=32, h_q=32, d=96, dtype="bfloat16", rope_scaling={}), "cuda")
    results = check_built(mod, with_builtin_contracts(Options(hints="off", scope="grid"), spec))
    assert [r.kernel for r in results] == ["batch_tree_attn_kernel"]
    assert [f.message for r in results for f in r.findings if f.severity != "note"] == []


def test_mla_prefill_blocks_stay_apart_at_deepseek_v2_lite_shape():
    """DeepSeek-V2-Lite's MLA (16 query heads, d_latent 512, d_rope 64): all 16 heads are rows of
    one tile, the row `(((tile*8 + i) >> 2) + (y >> 1)) >> 2` and the head `(...) & 15`. With the
    nested shifts left nested, the refinement by q_indptr's order ran past its budget (9.9M steps of
    9M), a warning on output; as one floor by 16 (floor_nest.py) it takes about 0.35M. Smaller
    d_latent (64 to 256) had no warning before either."""
    spec = "tvm.relax.frontend.nn.llm._prefill_kernels:_attention_prefill_mla"
    mod = built(spec, dict(h_q=16, d_latent=512, d_rope=64, dtype="bfloat16", sliding_window=False,
                           page_size=16), "cuda")
    results = check_built(mod, with_builtin_contracts(Options(hints="off", scope="grid"), spec))
    assert [r.kernel for r in results] == ["batch_prefill_paged_kv_mla_kernel"]
    assert [f.message for r in results for f in r.findings if f.severity != "note"] == []


def test_mla_prefill_with_two_tiles_a_row_keeps_its_blocks_apart_without_contracts():
    """At d_latent 512 a row's 32 heads span two tiles (F(j) = 2*(q[j+1] - q[j])): the prefix
    sums' closed form (telescope.py) puts tile p on row q[0] + p // 2, so no two blocks meet. The
    refinement with it ran out of 30x its budget (two warnings whose witnesses could not replay,
    "witness not validated"); with its divisions named (purify-arith) it takes milliseconds."""
    spec = "tvm.relax.frontend.nn.llm._prefill_kernels:_attention_prefill_mla"
    mod = built(spec, dict(h_q=32, d_latent=512, d_rope=64, dtype="float16", sliding_window=False,
                           page_size=16), "metal")
    results = check_built(mod, Options(hints="off", scope="grid"))
    assert [f.message for r in results for f in r.findings if f.severity != "note"] == []


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


# Tiles of 4 rows: batch b's ceil(rows / 4) tiles hold its rows from indptr[b], and block b takes
# tiles b, b + 4, ... of the list. Nothing orders two iterations of one block, and a batch whose
# rows are not a multiple of 4 brings the next batch's rows back by up to 3 on the tiles: after
# enough of them (indptr is not sorted), a row comes back 4 tiles later, in the block's next
# iteration, to other threads of the block.
def _walk_kernel(size: str, row: str, store: str) -> str:
    """A persistent walk over the rows of `indptr`, 4 blocks: batch j has `size` tiles (`size`
    formatted with `this` = j and `next` = j + 1), a thread's row is `row`, its store `store`."""
    return """
extern "C" __global__ void rows(float* __restrict__ out, const int* __restrict__ indptr, int batches) {
    int tile[1], batch[1], tiles[1];
    tile[0] = blockIdx.x;
    batch[0] = 0;
    tiles[0] = SIZE0;
    while (batch[0] < batches) {
        while (tiles[0] <= tile[0] && batch[0] < batches) {
            tile[0] = tile[0] - tiles[0];
            batch[0] = batch[0] + 1;
            if (batch[0] < batches) {
                int b = batch[0];
                tiles[0] = SIZEB;
            }
        }
        if (batch[0] < batches) {
            int row = ROW;
            if (row < indptr[batch[0] + 1]) {
                STORE;
            }
            tile[0] = tile[0] + 4;
        }
    }
}
""".replace("SIZE0", size.format(this="0", next="1")).replace("SIZEB", size.format(this="b", next="b + 1")).replace(
        "ROW", row).replace("STORE", store)


ROWS = _walk_kernel("(indptr[{next}] - indptr[{this}] + 3) >> 2", "indptr[batch[0]] + tile[0] * 4 + (threadIdx.x >> 3)",
                    "out[row * 8 + (threadIdx.x & 7)] = (float)threadIdx.x")


def test_a_row_met_again_within_one_block_has_a_witness_that_replays():
    """The block's two threads work in two iterations of the walk, 4 tiles apart; their rows meet
    only after more batches than walk_witness.py unrolls. walk_plan.py fixes the batch of each
    iteration and asks for the index map: the witness replays (it did not: "witness not
    validated"), with as many batches as the plan spans."""
    (result,) = check_text(ROWS, "cuda", "k.cu", (64,), (4,), {}, Options(hints="off", scope="block"), "k.cu")
    (f,) = result.findings
    assert f.rule == "write-after-write" and f.witness["replayed"] is True
    assert not any("not validated" in n for n in f.notes)
    assert f.witness["params"]["batches"] > walk_witness.BATCHES + 1
    assert sorted([*f.witness["first_iterations"].values(), *f.witness["second_iterations"].values()]) == [0, 1]


def test_a_plan_puts_the_iterations_up_to_the_lower_tile_on_the_first_batch():
    # Tiles 0, 4, 8, 12 from tile 0 with the lower side at tile 8: three on batch 0, one 6 further.
    assert plan_of(0, 0, 4, 4, 8, 6) == [0, 0, 0, 6]
    assert spans(0) == [0] and spans(16) == [1, 32, 64] and spans(20) == [1, 40]


# One row a tile (TVM's MLA prefill): batch b's tiles are its rows, so tile p of the list is row
# indptr[0] + p whatever the index map holds (the sizes telescope, telescope.py), and no two
# blocks, nor two iterations of one, stand on one row. Without the telescoping the walk's prefix
# sums are a free function and a warning remained, whose witness could not replay.
ONE_ROW = _walk_kernel("((indptr[{next}] * 32 - indptr[{this}] * 32) + 31) >> 5", "ROW",
                       "out[row * 64 + threadIdx.x] = (float)blockIdx.x")


def test_one_row_a_tile_keeps_every_row_to_one_block_and_one_iteration():
    src = ONE_ROW.replace("ROW", "indptr[batch[0]] + tile[0]")
    (result,) = check_text(src, "cuda", "k.cu", (64,), (4,), {}, Options(hints="off"), "k.cu")
    assert [f.message for f in result.findings if f.severity != "note"] == []


def test_rows_that_do_not_follow_the_index_map_still_collide():
    # Row = tile: batch 1's tile 0 is row 0 again, batch 0's first row (a real race, any indptr
    # with two non-empty batches): the closed form of the prefix sums removes nothing real.
    src = ONE_ROW.replace("ROW", "tile[0]").replace("if (row < indptr[batch[0] + 1])", "if (row >= 0)")
    (result,) = check_text(src, "cuda", "k.cu", (64,), (4,), {}, Options(hints="off"), "k.cu")
    races = [f for f in result.findings if f.rule == "write-after-write"]
    assert races and all(f.witness["replayed"] is True for f in races)
