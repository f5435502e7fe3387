"""Loop state that never repeats (analysis/execution/progress.py): a persistent kernel's (batch, tile)
counters grow lexicographically, proven from the loop's own statements, and a collision that
needs them to repeat is refuted; state that can repeat (a double buffer, a reset) proves nothing."""

import pytest

from analyzer import ir
from analyzer.analysis.execution import progress
from analyzer.frontend import lower_source
from analyzer.tvm.corpus import builders
from conftest import built

PERSISTENT = """
extern "C" __global__ void k(float* out, const int* tiles, int nb) {
  int tile[1];
  int batch[1];
  tile[0] = blockIdx.x;
  batch[0] = 0;
  while (1) {
    if (!(batch[0] < nb)) { break; }
    while (batch[0] < nb && tiles[batch[0]] <= tile[0]) {
      tile[0] = tile[0] - tiles[batch[0]];
      batch[0] = batch[0] + 1;
    }
    if (batch[0] < nb) {
      out[batch[0] * 4096 + tile[0] * 32 + threadIdx.x] = 1.0f;   // the access
      %s
      tile[0] = tile[0] + 16;
    }
  }
}
"""


def _outer_loop_and_access(source):
    (kernel,) = lower_source(source, "cuda", "k.cu")
    loops = [s for s in ir.walk_stmts(kernel.body) if isinstance(s, ir.Loop)]
    outer = loops[0]
    (store,) = [s for s in ir.walk_stmts(kernel.body) if isinstance(s, ir.MemOp) and s.access.buffer == "out"]
    inner = progress.exit_points(outer)[0]
    return outer, inner, store.access.id


def test_tile_counters_grow_lexicographically():
    outer, inner, site = _outer_loop_and_access(PERSISTENT % "")
    order = progress.counters(outer)
    assert order == (("cell", "batch", 0), ("cell", "tile", 0))
    assert progress.site_qualifies(outer, order, inner, site)


@pytest.mark.parametrize("between", ["continue;", "if (threadIdx.x == 0) { continue; }", "return;"])
def test_a_jump_before_the_increment_proves_nothing(between):
    outer, inner, site = _outer_loop_and_access(PERSISTENT % between)
    order = progress.counters(outer)
    assert not (order and progress.site_qualifies(outer, order, inner, site))


@pytest.mark.parametrize("change", [
    ("tile[0] = tile[0] + 16;", "tile[0] = 0;"),                           # a reset
    ("tile[0] = tile[0] + 16;", "tile[0] = tile[0] ^ 1;"),                 # a double buffer's toggle
    ("batch[0] = batch[0] + 1;", "batch[0] = batch[0] - 1;"),              # counting down
])
def test_state_that_can_repeat_proves_nothing(change):
    outer, inner, site = _outer_loop_and_access(PERSISTENT.replace(*change) % "")
    order = progress.counters(outer)
    assert not (order and progress.site_qualifies(outer, order, inner, site))


def test_the_persistent_prefill_tiles_never_repeat():
    """TVM's batch prefill walks (batch_idx, tile_id) this way (Metal here): the proof holds for
    its tile loop, at every device write, so a collision of those writes across the loop's
    iterations (which its threadgroup barriers do not order) cannot rest on a tile coming back."""
    spec, params = next((s, p) for s, p in builders(128) if s.endswith(":_attention_prefill"))
    (source,) = [text for _, text in built(spec, params, "metal").files()]
    (kernel,) = [k for k in lower_source(source, "metal", "prefill.metal") if k.name == "batch_prefill_paged_kv_kernel"]
    proven = [(s, progress.counters(s)) for s in ir.walk_stmts(kernel.body) if isinstance(s, ir.Loop)]
    proven = [(s, order) for s, order in proven if order and len(order) == 2]
    # The tile loop, and the inner loop that moves to the next batch.
    assert [tuple(c[1] for c in order) for _, order in proven] == [("batch_idx", "tile_id")] * 2
    loop, order = proven[0]
    stores = [s.access.id for s in ir.walk_stmts(loop.body) if isinstance(s, ir.MemOp)
              and s.access.space == ir.GLOBAL and s.access.is_write]
    assert len(stores) == 3 and all(progress.site_increments(loop, order, a) for a in stores)
    inner = progress.exit_points(loop)[0]      # the batch loop, whose exit values the stores read
    assert inner is proven[1][0]
    assert all(progress.site_qualifies(loop, order, inner, a) for a in stores)
