"""TVM's own kernels: every file it emits for the corpus parses and lowers, and the analysis of
each finds no error beyond the known real races."""

import pytest

from analyzer.analysis.pairing import races
from analyzer.frontend import lower_source
from analyzer.pipeline import Options, check_built, with_builtin_contracts
from analyzer.tvm.corpus import MERGE_STATE, builders
from conftest import Precomputed, built

# Long: in the slow set, which .ci/run runs after the default run (pyproject.toml's markers).
pytestmark = pytest.mark.slow

TARGETS = ("cuda", "metal")


def _cases(head_dims, targets=TARGETS, keep=lambda i, spec, params, target: True):
    return [pytest.param(spec, params, target, id=f"{spec.split(':')[1]}-{params.get('head_dim', params.get('d', params.get('d_qk', params.get('d_latent', ''))))}-{target}")
            for hd in head_dims for i, (spec, params) in enumerate(builders(hd)) for target in targets
            if keep(i, spec, params, target)]


# The full sweep (every head_dim from 64 to 512, any targets) is benchmarks/corpus_sweep.py. The
# tests pin head_dim 128 on both targets (the builds the corpus check below analyses) and the two
# ends of the range, 64 on cuda and 512 on metal. The generic builders take no head_dim (their
# builds are the same at every one): they are at 128 only.
_HEAD_DIM_ONLY = lambda i, spec, params, target: bool(params)  # noqa: E731
PARSE_SLICE = (_cases((128,)) + _cases((64,), ("cuda",), _HEAD_DIM_ONLY)
               + _cases((512,), ("metal",), _HEAD_DIM_ONLY))


@pytest.mark.parametrize("spec,params,target", PARSE_SLICE)
def test_every_emitted_file_parses_and_lowers(spec, params, target):
    mod = built(spec, params, target)
    kernels = lower_source(mod.source, mod.lang, "emitted")
    assert {k.name for k in kernels} == {k.name for k in mod.kernels}
    assert all(k.body for k in kernels)


# Real races in TVM's kernels at head_dim 128, each written up in the closing note of the core issue:
# the merge-state race, and the Hillis-Steele scans of the cumsum/sampling kernels, which read a
# neighbour's element and overwrite their own between the same two barriers (within one warp).
KNOWN_RACES = {
    MERGE_STATE: {("write-after-read", "S")},
    "tvm.relax.backend.gpu_generic:gpu_2d_continuous_cumsum": {("write-after-read", "shared_buf")},
    "tvm.relax.backend.gpu_generic:gpu_multinomial_from_uniform": {("write-after-read", "shared_buf")},
}


# Vulkan builds are checked too: TVM's SPIR-V path (device TIR -> GLSL -> glslang) at head_dim 128.
# A pinned slice of the sweep (`benchmarks/corpus_sweep.py --analyse --head-dims 128 --targets
# cuda,metal,vulkan` checks every builder on every target): every builder on cuda, the known races
# on every target, and the other builders in turn on metal (even places in the list) or vulkan
# (odd places): each builder is checked on two targets, and metal and vulkan each see half of
# every family of kernels (prefill, tree attention, page copies, KV appends, RoPE, scans).
def _corpus_slice(i, spec, params, target):
    return target == "cuda" or spec in KNOWN_RACES or target == ("metal", "vulkan")[i % 2]


def _corpus_check(spec, params, target):
    # Every pair the solver-free disjointness proof settles is asked of the solver too.
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(races, "CROSS_CHECK", True)
        return check_built(built(spec, params, target), Options(timeout_ms=5000, hints="off"))


# Built and analysed two at a time, one per core, as the first case runs.
CORPUS_CHECKED = Precomputed(_corpus_check, ("spec", "params", "target"))


@pytest.mark.xdist_group("tvm_corpus")   # one worker computes every case (conftest.Precomputed)
@pytest.mark.parametrize("spec,params,target", _cases((128,), TARGETS + ("vulkan",), _corpus_slice))
def test_no_error_finding_but_the_known_races(spec, params, target, request):
    assert_only_known_races(spec, CORPUS_CHECKED(request))


def assert_only_known_races(spec, results):
    """Error findings only for the known real races, and every finding's witness replays (shared
    with the opencl and webgpu corpus tests)."""
    errors = {(f.rule, (f.second.buffer or "").removesuffix("_ptr"))
              for r in results for f in r.findings if f.severity == "error"}
    assert errors <= KNOWN_RACES.get(spec, set())
    # Every witness replays on concrete values, warnings' too: a persistent kernel's walk state,
    # which the query keeps as unknown functions, is asked to be what the walk computes from the
    # model's index map (walk_witness.py, and on concrete plans of batches walk_plan.py); MLA
    # prefill's collisions between blocks, which had no witness, are gone (telescope.py).
    assert [f.message for r in results for f in r.findings
            if f.witness and f.witness.get("replayed") is False] == []
    if spec in KNOWN_RACES:
        assert errors, "a known race was not found"


def test_index_map_rows_keep_compact_copy_data_dependent():
    """`_compact_kv_copy` reads source positions from row 0 and destinations from row 1 of
    `copy_src_dst_pos` (shape (2, total_copy_length)). Which pages two sequences touch depends on
    that map's contents, so its collisions are data-dependent warnings, not errors: a loaded
    index stays inside its row of the declared shape, so a destination never reads a source's
    entry whatever `total_copy_length` is."""
    mod = built("tvm.relax.frontend.nn.llm.kv_cache:_compact_kv_copy",
                dict(num_heads=1, head_dim=512, dtype="float16", page_size=16), "cuda")
    findings = [f for r in check_built(mod, Options(timeout_ms=5000, hints="off")) for f in r.findings]
    assert findings and all(f.severity == "warning" for f in findings)
    assert all(any("copy_src_dst_pos" in n for n in f.notes) for f in findings)


@pytest.mark.parametrize("target", ["cuda", "metal"])
def test_bfloat16_decode_parses_and_has_no_error(target):
    """bfloat16: Metal widens with `as_type<float4>(...)`, CUDA stores through TVM's nv_bfloat164
    struct member by member; every thread of a row stores the same merged value (benign)."""
    mod = built("tvm.relax.frontend.nn.llm._decode_kernels:_attention_decode",
                dict(num_kv_heads=1, num_qo_heads=8, head_dim=128, qkv_dtype="bfloat16", sliding_window=False,
                     rope_scaling={}, page_size=16), target)
    if target == "metal":
        assert "as_type<" in mod.source
    results = check_built(mod, Options(timeout_ms=5000, hints="off"))
    assert results and not [f.message for r in results for f in r.findings if f.severity == "error"]


def test_cumsum_levels_are_decided_at_the_default_budget():
    """The cumsum writes each level of its scan tree into `Tmp` at `i * cse_v11 + j`, with
    `j <= (n - 1) >> (9 * i + 9)` (a shift by a computed amount). At the default 1 s budget every
    pair on `Tmp` is decided, and none collides: only the known `shared_buf` races remain.

    Between blocks (`blockIdx.y * n` no longer cancels) one pair of levels may stay undecided at
    that budget (a warning, never clean); no pair on `Tmp` collides."""
    mod = built("tvm.relax.backend.gpu_generic:gpu_2d_continuous_cumsum", {}, "cuda")
    findings = [f for r in check_built(mod, Options(hints="off", scope="block")) for f in r.findings]
    assert {(f.rule, f.second.buffer) for f in findings if f.severity != "note"} == {
        ("write-after-read", "shared_buf_ptr")}
    grid = [f for r in check_built(mod, Options(hints="off", scope="grid")) for f in r.findings]
    assert {f.rule for f in grid} <= {"unknown"}


def test_a_race_the_report_shows_once_is_detailed_once(monkeypatch):
    """Metal's cumsum reads four lanes of `shared_buf` on one line (`int4(...)`), each racing the
    write beside it: four races, one finding per line pair (pipeline._dedupe). Only the race shown
    gets its witness made readable and replayed; the report is the one every race detailed gives."""
    mod = built("tvm.relax.backend.gpu_generic:gpu_2d_continuous_cumsum", {}, "metal")
    calls = []
    readable = races.PairChecker._readable

    def counted(self, *args):
        calls.append(1)
        return readable(self, *args)

    monkeypatch.setattr(races.PairChecker, "_readable", counted)

    def report():
        calls.clear()
        findings = [f for r in check_built(mod, Options(hints="off", scope="block")) for f in r.findings]
        return [(f.rule, f.severity, f.kernel, f.second.line, f.first.line, f.notes, f.witness["replayed"])
                for f in findings], len(calls)

    shown, detailed = report()
    monkeypatch.setattr(races, "stands_in_report", lambda *args: False)
    every, all_detailed = report()
    races_shown = sum(rule in (races.WAR, races.RAW, races.WAW) for rule, *_ in shown)
    assert shown == every and races_shown == 8
    assert detailed == races_shown and all_detailed == 4 * races_shown


@pytest.mark.parametrize("spec,target", [
    ("tvm.relax.frontend.nn.llm._page_kernels:_copy_single_page", "cuda"),
    ("tvm.relax.frontend.nn.llm._page_kernels:_compact_kv_copy", "metal"),
])
def test_page_copies_at_head_dim_96_are_decided(spec, target):
    """At head_dim 96 TVM indexes a page with `i // (n*96)`, `i % (n*96) // 96` and `i % 96`,
    spelled as truncating divisions with sign fix-ups (shifts and masks at 128). At the default
    1 s budget both page copies are decided and clean (`_compact_kv_copy` with TVM's built-in
    contracts): two threads of one sequence copy different cells, of two sequences different
    slots. They were unknown, and `_compact_kv_copy` had false errors, before the encoder read
    those divisions back (analysis/decision/division_forms.py, solver.Encoder._by_constant)."""
    params = dict(num_heads=32, head_dim=96, dtype="bfloat16" if target == "cuda" else "float16", page_size=16)
    if spec.endswith("_copy_single_page"):
        params = dict(num_heads=32, page_size=16, head_dim=96, dtype="bfloat16")
    results = check_built(built(spec, params, target), with_builtin_contracts(Options(hints="off"), spec))
    assert results and [(r.status, [f.message for f in r.findings]) for r in results] == [("clean", [])] * len(results)


def test_page_append_at_head_dim_80_is_decided():
    """At head_dim 80 on CUDA (1024 threads a block) TVM takes the flat index i = b*1024 + t
    apart as row `(b*2 + (t >> 9)) / 5`, head `((b*64 + (t >> 4)) % 160) / 5` and `i % 80`. At
    the default 1 s budget the append is decided and clean (with its built-in position_map
    contract): it was unknown, with warnings, before the encoder read each as a digit of i
    (solver.Encoder._digits)."""
    spec = "tvm.relax.frontend.nn.llm.kv_cache:_kv_cache_transpose_append"
    params = dict(num_key_value_heads=32, head_dim=80, dtype="float16", page_size=16)
    results = check_built(built(spec, params, "cuda"), with_builtin_contracts(Options(hints="off"), spec))
    assert results and [(r.status, [f.message for f in r.findings]) for r in results] == [("clean", [])] * len(results)
