"""Races between blocks (analyzer/analysis/interblock/grid.py): two-block witnesses, --scope and its
configuration key, the solver-free test on per-block indices, and the grid fix hints.
The verdicts of the grid fixtures themselves are checked by test_rule_fixtures.py."""

import pytest

from analyzer.analysis.execution.symbolic import SymbolicExecutor
from analyzer.analysis.interblock.grid import GridChecker, GridDisjointness, block_dims_read
from analyzer.command import config
from analyzer.errors import KernelraceError
from analyzer.frontend import lower_source
from analyzer.pipeline import _apply_dims
from conftest import FIXTURES, fixture_args

GRID_RACY = sorted(p for p in FIXTURES.rglob("grid_*") if p.suffix in (".cu", ".metal", ".comp")
                   and not p.stem.endswith("_fixed") and "expect:" in p.read_text())


@pytest.mark.parametrize("path", GRID_RACY, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_grid_witness_names_two_blocks_and_replays(path, cli):
    code, report, err = cli("check", str(path), *fixture_args(path), "--format", "json")
    assert code == 1, err
    assert report["findings"]
    for f in report["findings"]:
        w = f["witness"]
        assert w["first_block"] != w["second_block"]
        assert w["blocks"] == [w["first_block"], w["second_block"]]
        assert w["replayed"] is True
        assert "different blocks" in f["notes"][0]
        # No block barrier orders two blocks: the hint never proposes one (a grid sync, in a kernel
        # that already has them).
        synced = "this_grid" in path.read_text()
        assert ("grid syncs do: insert `cg::this_grid().sync()`" if synced else
                "no barrier inside the kernel can order two blocks") in f["fix"]["text"]
        assert "__syncthreads();" not in f["fix"]["text"]


def test_accumulation_hint_proposes_an_atomic_and_partials_another_layout(cli):
    _, acc, _ = cli("check", str(FIXTURES / "cuda/grid_row_accumulate.cu"), "--block-dim", "256", "--format", "json")
    assert all("atomicAdd(&sums[i], v)" in f["fix"]["text"] for f in acc["findings"])
    _, part, _ = cli("check", str(FIXTURES / "cuda/grid_partials.cu"), "--block-dim", "128", "--format", "json")
    (f,) = part["findings"]
    assert "atomic" not in f["fix"]["text"] and "its own elements of partial" in f["fix"]["text"]


def test_text_output_says_the_threads_are_in_different_blocks(cli):
    code, out, _ = cli("check", str(FIXTURES / "cuda/grid_partials.cu"), "--block-dim", "128")
    assert code == 1
    assert "of block (1,0,0)" in out and "(different blocks)" in out


def test_scope_block_leaves_out_the_grid_and_scope_grid_the_block(cli):
    grid_race = str(FIXTURES / "cuda/grid_row_accumulate.cu")
    code, report, _ = cli("check", grid_race, "--block-dim", "256", "--scope", "block", "--format", "json")
    assert (code, report["findings"]) == (0, [])
    block_race = FIXTURES / "cuda/reduce_tree.cu"
    code, report, _ = cli("check", str(block_race), *fixture_args(block_race), "--scope", "grid", "--format", "json")
    assert all("second_block" in f["witness"] for f in report["findings"] if f["witness"])
    code, report, _ = cli("check", str(block_race), *fixture_args(block_race), "--format", "json")
    assert any("second_block" not in f["witness"] for f in report["findings"] if f["witness"])


def test_scope_in_configuration(tmp_path):
    good = tmp_path / "kernelrace.toml"
    good.write_text('scope = "block"\n')
    assert config.load(good).scope == "block"
    bad = tmp_path / "bad.toml"
    bad.write_text('scope = "warp"\n')
    with pytest.raises(KernelraceError, match="scope: expected one of 'block', 'grid', 'all'"):
        config.load(bad)


def _kernel(src: str, block=(256,), grid=None):
    k = lower_source(src, "cuda", "t.cu")[0]
    _apply_dims(k, block, grid, {})
    return k, SymbolicExecutor(k).run()


def _only_write(ev):
    return next(e for e in ev.accesses.values() if e.access.is_write)


@pytest.mark.parametrize("index", [
    "blockIdx.x * blockDim.x + threadIdx.x",
    "blockIdx.x * 256 + threadIdx.x",
    "threadIdx.x + blockDim.x * blockIdx.x",
])
def test_one_element_per_thread_of_the_grid_needs_no_solver(index):
    k, ev = _kernel(f"__global__ void f(float* a) {{ a[{index}] = 1.0f; }}")
    w = _only_write(ev)
    assert GridDisjointness(k, block_dims_read(k), frozenset()).apart(w, w)


def test_grid_stride_loop_needs_no_solver_with_a_symbolic_grid():
    k, ev = _kernel("__global__ void f(float* a, int n) { for (int i = blockIdx.x * blockDim.x + threadIdx.x; "
                    "i < n; i += blockDim.x * gridDim.x) a[i] = 1.0f; }")
    assert k.grid_dim.get("x") is None
    w = _only_write(ev)
    assert GridDisjointness(k, block_dims_read(k), frozenset()).apart(w, w)


def test_overlapping_and_per_row_indices_are_not_proved_apart():
    # The proof must not settle what collides: a tile stride smaller than the tile, every block on row 0.
    for index in ("blockIdx.x * 128 + threadIdx.x", "threadIdx.x", "blockIdx.x / 2"):
        k, ev = _kernel(f"__global__ void f(float* a, const float* b) {{ a[{index}] = b[blockIdx.x]; }}")
        w = _only_write(ev)
        assert not GridDisjointness(k, block_dims_read(k), frozenset()).apart(w, w), index


def test_a_kernel_that_never_reads_its_block_index_has_no_grid_pairs():
    # A grid dimension the kernel never reads counts as extent 1 (docs/how-it-works.md).
    k, ev = _kernel("__global__ void f(float* a) { a[threadIdx.x] = 1.0f; }")
    assert block_dims_read(k) == frozenset()
    from analyzer.analysis.execution.concurrency import build_cfg
    out = GridChecker(k, ev, build_cfg(k, ev.tracked_conditions)).run()
    assert out.hazards == [] and out.queries == 0
    k, _ = _kernel("__global__ void f(float* a) { a[threadIdx.x] = 1.0f; }", grid=(2,))
    assert block_dims_read(k) == frozenset("x")   # launched with two blocks: they race


def test_shared_memory_never_races_between_blocks(cli, tmp_path):
    src = tmp_path / "s.cu"
    src.write_text("__global__ void f(float* out) {\n  __shared__ float s[256];\n  s[threadIdx.x] = 1.0f;\n"
                   "  __syncthreads();\n  out[blockIdx.x * 256 + threadIdx.x] = s[255 - threadIdx.x];\n}\n")
    code, report, _ = cli("check", str(src), "--block-dim", "256", "--format", "json")
    assert (code, report["findings"]) == (0, [])


# TVMScript builders whose blocks race (tests/builders/grid_races.py), linted on every target with
# the grid extents of TVM's lowered TIR.
@pytest.mark.parametrize("target", ["cuda", "metal", "vulkan"])
@pytest.mark.parametrize("builder,params,rule", [
    ("builders.grid_races:tiles", ["--param", "overlap=1"], "write-after-write"),
    ("builders.grid_races:row_sums", [], "write-after-read"),
])
def test_tvm_builders_whose_blocks_race(builder, params, rule, target, cli):
    code, report, err = cli("lint", builder, "--target", target, *params, "--format", "json")
    assert code == 1, err
    errors = [f for f in report["findings"] if f["severity"] == "error"]
    assert rule in {f["rule"] for f in errors}
    for f in errors:
        assert f["witness"]["first_block"] != f["witness"]["second_block"] and f["witness"]["replayed"]


@pytest.mark.parametrize("builder,params", [
    ("builders.grid_races:tiles", ["--param", "overlap=0"]),
    ("builders.grid_races:row_sums_fixed", []),
])
def test_tvm_builders_with_disjoint_blocks_are_clean(builder, params, cli):
    code, report, err = cli("lint", builder, "--target", "cuda", *params, "--format", "json")
    assert (code, report["findings"]) == (0, []), err


def test_a_race_between_blocks_and_one_within_a_block_have_different_fingerprints(cli):
    # A baseline of the block's race must not hide the grid's race on the same two lines.
    from dataclasses import replace

    from analyzer.report.sarif import fingerprint
    from analyzer.pipeline import Options, check_file

    (result,) = check_file(str(FIXTURES / "cuda/grid_partials.cu"), None, (128,), None, {}, Options(hints="off"))
    (f,) = result.findings
    within = replace(f, witness={k: v for k, v in f.witness.items() if "block" not in k})
    assert fingerprint(f) != fingerprint(within)


def test_out_of_time_leaves_every_global_buffer_undecided_never_clean(cli, tmp_path):
    src = tmp_path / "t.cu"
    src.write_text("__global__ void f(float* a, float* b) {\n  a[threadIdx.x] = 1.0f;\n  b[threadIdx.x] = a[blockIdx.x];\n}\n")
    code, report, _ = cli("check", str(src), "--block-dim", "64", "--kernel-timeout", "0.000001",
                          "--scope", "grid", "--format", "json")
    undecided = {f["second"]["buffer"] for f in report["findings"] if f["rule"] == "unknown"}
    assert undecided == {"a", "b"} and all("two blocks" in f["message"] for f in report["findings"])


# ----- grid syncs (cooperative groups) -----

_CG = "#include <cooperative_groups.h>\nnamespace cg = cooperative_groups;\n"


def _findings(cli, tmp_path, src: str, *args) -> list[dict]:
    path = tmp_path / "k.cu"
    path.write_text(_CG + src)
    code, report, err = cli("check", str(path), "--block-dim", "128", "--hints", "off", "--format", "json", *args)
    assert code in (0, 1), err
    return report["findings"]


def test_grid_sync_is_a_grid_barrier_and_a_block_barrier():
    k = lower_source(_CG + "__global__ void f(float* a) { cg::this_grid().sync(); cg::grid_group g = "
                     "cg::this_grid(); g.sync(); cg::sync(g); }", "cuda", "t.cu")[0]
    from analyzer import ir
    assert [s.scope for s in k.body if isinstance(s, ir.Barrier)] == [ir.GRID] * 3
    from analyzer.analysis.execution.concurrency import build_cfg, cuts, grid_cuts
    cfg = build_cfg(k)
    assert cuts(cfg, False) == grid_cuts(cfg) == frozenset(cfg.barrier_node)


def test_a_grid_sync_in_a_loop_whose_blocks_leave_at_different_iterations_is_divergent(cli, tmp_path):
    found = _findings(cli, tmp_path, "__global__ void f(float* a, int steps) {\n  cg::grid_group g = cg::this_grid();\n"
                      "  for (int s = 0; s < steps; ++s) {\n    a[blockIdx.x * 128 + threadIdx.x] = 1.0f;\n"
                      "    g.sync();\n    if (s == blockIdx.x) break;\n  }\n}\n")
    (f,) = found
    assert f["rule"] == "divergent-barrier" and "leave early" in f["message"] and f["second"]["line"] == 7


def test_a_grid_sync_under_a_condition_every_block_shares_is_not_divergent(cli, tmp_path):
    found = _findings(cli, tmp_path, "__global__ void f(float* a, float* b, int n, int steps) {\n"
                      "  cg::grid_group g = cg::this_grid();\n  int i = blockIdx.x * 128 + threadIdx.x;\n"
                      "  for (int s = 0; s < steps; ++s) {\n    if (n > 4) {\n      a[i] = b[i];\n      g.sync();\n"
                      "      b[i] = a[(i + 128) % n];\n      g.sync();\n    }\n  }\n}\n")
    assert found == []


def test_redundant_barrier_never_reports_a_grid_sync(cli, tmp_path):
    # Within a block nothing needs this sync; between blocks it orders the two phases.
    found = _findings(cli, tmp_path, "__global__ void f(float* a, float* b) {\n  int i = blockIdx.x * 128 + threadIdx.x;\n"
                      "  a[i] = 1.0f;\n  cg::this_grid().sync();\n  b[i] = a[(blockIdx.x + 1) % gridDim.x * 128 + threadIdx.x];\n}\n")
    assert found == []


def test_a_grid_witness_does_not_replay_across_a_grid_sync():
    from analyzer.analysis.witness.replay import Launch, Side, check_witness
    k = lower_source(_CG + "__global__ void f(float* a) {\n  a[blockIdx.x] = 1.0f;\n  cg::this_grid().sync();\n"
                     "  a[0] = 2.0f;\n}\n", "cuda", "t.cu")[0]
    w1, w2 = (acc.id for acc in __import__("analyzer").ir.accesses(k.body))
    launch = Launch({}, {"x": 1, "y": 1, "z": 1}, {"x": 2, "y": 1, "z": 1})
    reason = check_witness(k, launch, lambda *a: 0, (0, 0, 0), Side((0, 0, 0), w1, {}, 0), Side((0, 0, 0), w2, {}, 0),
                           0, None, (1, 0, 0))
    assert reason is not None and "grid sync separates them" in reason


# ----- the threadfence-and-ticket "last block" pattern (analyzer/analysis/interblock/last_block.py) -----

_LAST = """__device__ unsigned int count = 0;
__global__ void f(const float *in, float *partials, float *out) {
  if (threadIdx.x == 0) {
    %s
    if (t == gridDim.x - 1) {
      float total = 0.0f;
      for (int b = 0; b < gridDim.x; ++b) total += partials[b];
      *out = total;
    }
  }
}
"""


@pytest.mark.parametrize("draw,racy", [
    ("partials[blockIdx.x] = in[blockIdx.x]; __threadfence(); unsigned int t = atomicAdd(&count, 1);", False),
    ("partials[blockIdx.x] = in[blockIdx.x]; __threadfence(); unsigned int t = atomicInc(&count, gridDim.x);", False),
    # No fence, the fence after the ticket, a fence only some blocks run, a ticket of 2 per draw.
    ("partials[blockIdx.x] = in[blockIdx.x]; unsigned int t = atomicAdd(&count, 1);", True),
    ("unsigned int t = atomicAdd(&count, 1); __threadfence(); partials[blockIdx.x] = in[blockIdx.x];", True),
    ("partials[blockIdx.x] = in[blockIdx.x]; if (blockIdx.x > 2) __threadfence(); "
     "unsigned int t = atomicAdd(&count, 1);", True),
    ("partials[blockIdx.x] = in[blockIdx.x]; __threadfence(); unsigned int t = atomicAdd(&count, 2);", True),
])
def test_last_block_pattern_orders_only_what_is_fenced_before_the_ticket(draw, racy, cli, tmp_path):
    found = _findings(cli, tmp_path, _LAST % draw)
    raced = {f["second"]["buffer"] for f in found if f["rule"] == "read-after-write"}
    assert raced == ({"partials"} if racy else set()), found
    assert all(f["witness"]["replayed"] for f in found)


def test_last_block_pattern_needs_one_ticket_per_block_and_a_last_ticket_reader(cli, tmp_path):
    # Every thread draws a ticket: the counter no longer counts blocks.
    every = _findings(cli, tmp_path, _LAST.replace("if (threadIdx.x == 0) {", "{") %
                      "partials[blockIdx.x] = in[blockIdx.x]; __threadfence(); unsigned int t = atomicAdd(&count, 1);")
    assert "partials" in {f["second"]["buffer"] for f in every}
    # Every block reads a neighbour's partial after its own draw: the neighbour may draw later.
    src = ("__device__ unsigned int count = 0;\n__global__ void f(const float *in, float *partials, float *out) {\n"
           "  if (threadIdx.x == 0) {\n    partials[blockIdx.x] = in[blockIdx.x];\n    __threadfence();\n"
           "    unsigned int t = atomicAdd(&count, 1);\n    out[blockIdx.x] = partials[(blockIdx.x + 1) % gridDim.x] + t;\n"
           "  }\n}\n")
    assert "partials" in {f["second"]["buffer"] for f in _findings(cli, tmp_path, src)}


def test_the_row_lemma_holds_for_every_small_value():
    # The grid pass adds it to its queries as a fact: a wrong one would hide races.
    import itertools

    import z3
    k, ev = _kernel("__global__ void f(float* a, int n) { a[blockIdx.y * n + threadIdx.x] = 1.0f; }")
    from analyzer.analysis.execution.concurrency import build_cfg
    checker = GridChecker(k, ev, build_cfg(k, ev.tracked_conditions))
    checker._encoders()
    w = _only_write(ev)
    enc = checker.exact
    lemmas = checker._row_lemmas(enc, w, w)
    assert len(lemmas) == 2
    n, b1, b2 = enc.param("n"), enc.bid["y"], enc.bid2["y"]
    for vn, v1, v2 in itertools.product(range(-3, 4), range(0, 4), range(0, 4)):
        subs = [(n, z3.IntVal(vn)), (b1, z3.IntVal(v1)), (b2, z3.IntVal(v2))]
        assert all(z3.is_true(z3.simplify(z3.substitute(c, *subs))) for c in lemmas), (vn, v1, v2)
