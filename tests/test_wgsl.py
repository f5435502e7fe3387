"""The WGSL front end: the grammar and its template-list post-lexer, the lowering's reading of
builtins, workgroup sizes, barriers and control flow, WebGPU builds of TVM's kernels, and errors."""

import pytest
from lark import Lark

from analyzer import ir
from analyzer.analysis.pairing import races
from analyzer.errors import KernelraceError
from analyzer.frontend import lower_source
from analyzer.frontend.parser import GRAMMAR_DIR
from analyzer.frontend.wgsl.parse import TemplatePostLex, parse_wgsl
from analyzer.pipeline import Options, check_built, with_builtin_contracts
from analyzer.tvm.corpus import builders
from conftest import FIXTURES, built
from test_tvm_corpus import assert_only_known_races

WGSL = FIXTURES / "wgsl"


def lower(src: str) -> ir.Kernel:
    (k,) = lower_source(src, "wgsl", "t.wgsl")
    return k


def stmts_of(k: ir.Kernel, cls):
    return [s for s in ir.walk_stmts(k.body, updates=True) if isinstance(s, cls)]


def accesses(e) -> list[ir.Access]:
    out, stack = [], [e]
    while stack:
        x = stack.pop()
        if isinstance(x, ir.Read):
            out.append(x.access)
        stack.extend(ir.operands(x))
    return out


def test_grammar_builds_in_strict_mode_without_conflicts():
    Lark.open(str(GRAMMAR_DIR / "wgsl.lark"), parser="lalr", lexer="basic", postlex=TemplatePostLex(),
              strict=True, maybe_placeholders=True)


@pytest.mark.parametrize("src", [
    "var<workgroup> a : array<array<vec4<f16>, 4>, 8>;",             # `>>` and `>>>` close lists
    "fn f(x : i32) -> bool { return x < 3 && x > (1 >> 1); }",         # comparisons and a shift
    "fn f(p : ptr<function, array<f32, 4>>) -> f32 { return (*p)[1]; }",
    "fn f() -> vec4<f32> { return vec4<f32>(vec2<f32>(1.0, 2.0), 3e-1f, 0x1p4f); }",
    "fn f(a : u32) -> u32 { let b = bitcast<u32>(i32(a)) >> 2u; return select(a, b, a >= b); }",
    "alias V = vec3<u32>;\nconst N : u32 = 4u;\nstruct S { @align(16) x : array<f32, N>, y : V, }",
])
def test_constructs_parse(src):
    parse_wgsl(src, "t.wgsl")


def test_builtins_lower_to_thread_and_block_indices():
    k = lower("""
@group(0) @binding(0) var<storage, read_write> out : array<u32>;
@compute @workgroup_size(8, 4)
fn main(@builtin(global_invocation_id) gid : vec3<u32>, @builtin(local_invocation_index) li : u32,
        @builtin(num_workgroups) n : vec3<u32>) {
    out[gid.y * 8u * n.x + gid.x] = li;
}""")
    assert k.lang == "wgsl" and k.block_dim == {"x": 8, "y": 4, "z": 1}
    # WGSL promises no subgroup size nor lockstep: no two invocations share a warp.
    assert k.warp_size == 1
    (op,) = stmts_of(k, ir.MemOp)
    text = repr(op.access.offset) + repr(op.access.value)
    for name in ("bid.x", "bdim.x", "tid.x", "bid.y", "tid.y", "gdim.x", "tid.z"):
        assert f"Builtin(name='{name}')" in text
    assert op.access.space == ir.GLOBAL and op.access.width == 4


def test_override_workgroup_size_is_symbolic_and_is_the_block_extent():
    k = lower("""
override WG : u32 = 64;
override SCALE : u32;
var<workgroup> a : array<u32, 256>;
@compute @workgroup_size(WG)
fn main(@builtin(local_invocation_id) lid : vec3<u32>) { a[(lid.x + WG) % WG] = SCALE; }""")
    assert k.block_dim["x"] is None and k.block_dim["y"] == 1
    (op,) = stmts_of(k, ir.MemOp)
    assert "Builtin(name='bdim.x')" in repr(op.access.offset)
    assert op.access.value == ir.Param("SCALE") and k.params == ["SCALE"]


def test_override_sized_workgroup_array_has_no_assumed_size():
    k = lower("""
override WG : u32 = 64;
var<workgroup> a : array<f32, WG>;
@compute @workgroup_size(WG)
fn main(@builtin(local_invocation_id) lid : vec3<u32>) { a[lid.x] = 1.0; }""")
    # No size assumed: only that offsets start where the workgroup variable does (never negative).
    a = k.buffers["a"]
    assert a.size_bytes is None and a.strides == () and a.declared


def test_shadowed_variables_and_vector_lanes_get_distinct_names():
    k = lower("""
@compute @workgroup_size(4)
fn main() {
    var v : vec2<f32>;
    { var v : f32 = 1.0; var v_1 : u32 = 2u; }
}""")
    targets = [s.target for s in k.body]
    assert len(targets) == len(set(targets)) == 4


def test_barriers_order_the_memory_the_wgsl_memory_model_says():
    k = lower("""
var<workgroup> w : u32;
@compute @workgroup_size(64)
fn main() {
    workgroupBarrier();
    storageBarrier();
    textureBarrier();
    let v = workgroupUniformLoad(&w);
    if (v > 0u) { return; }
}""")
    spaces = [(b.scope, b.spaces, b.text) for b in stmts_of(k, ir.Barrier)]
    assert spaces[:3] == [(ir.BLOCK, frozenset({ir.SHARED}), "workgroupBarrier()"),
                          (ir.BLOCK, frozenset({ir.GLOBAL}), "storageBarrier()"),
                          (ir.BLOCK, frozenset(), "textureBarrier()")]
    # workgroupUniformLoad: a barrier, the load, a barrier (as Tint lowers it).
    i = next(j for j, s in enumerate(k.body) if isinstance(s, ir.Assign))
    assert [type(s) for s in k.body[i - 1:i + 2]] == [ir.Barrier, ir.Assign, ir.Barrier]
    (read,) = accesses(k.body[i].value)
    assert read.buffer == "w" and read.space == ir.SHARED and not read.is_write


def test_atomics_are_atomic_read_modify_writes():
    k = lower("""
@group(0) @binding(0) var<storage, read_write> c : array<atomic<u32>>;
@compute @workgroup_size(64)
fn main(@builtin(local_invocation_id) lid : vec3<u32>) {
    let old = atomicAdd(&c[lid.x % 4u], 1u);
    atomicStore(&c[4], old);
    _ = atomicLoad(&c[5]);
}""")
    ops = stmts_of(k, ir.MemOp)
    assert [(o.access.is_write, o.access.atomic) for o in ops] == [(True, True), (True, True)]
    (load,) = [a for s in stmts_of(k, ir.Eval) for a in accesses(s.value)]
    assert load.atomic and not load.is_write and load.offset == ir.Const(20)


def test_loop_with_continuing_and_break_if():
    k = lower("""
var<workgroup> a : array<f32, 64>;
@compute @workgroup_size(64)
fn main(@builtin(local_invocation_id) lid : vec3<u32>) {
    var i = 0u;
    loop {
        a[lid.x] = 1.0;
        continuing {
            i += 1u;
            break if i >= 4u;
        }
    }
}""")
    (loop,) = stmts_of(k, ir.Loop)
    # No `continue` in the body: continuing runs at its end, `break if` a conditional break there.
    assert loop.cond is None and loop.update == []
    assert isinstance(loop.body[-1], ir.If) and isinstance(loop.body[-1].then[0], ir.Break)
    assert isinstance(loop.body[-2], ir.Assign)


def test_continuing_with_continue_is_the_update_clause():
    k = lower("""
@compute @workgroup_size(64)
fn main(@builtin(local_invocation_id) lid : vec3<u32>) {
    var i = 0u;
    loop {
        if (i > 8u) { break; }
        if (lid.x == i) { continue; }
        continuing { i += 1u; }
    }
}""")
    (loop,) = stmts_of(k, ir.Loop)
    assert [type(s) for s in loop.update] == [ir.Assign]


def test_switch_with_break_is_a_one_trip_loop_of_ifs():
    k = lower("""
var<workgroup> a : array<u32, 64>;
@compute @workgroup_size(64)
fn main(@builtin(local_invocation_id) lid : vec3<u32>) {
    switch (lid.x % 3u) {
        case 0u, 1u: { a[lid.x] = 1u; break; }
        default: { a[lid.x] = 2u; }
    }
}""")
    (loop,) = [s for s in k.body if isinstance(s, ir.Loop)]
    first = loop.body[0]
    assert isinstance(first, ir.If) and isinstance(first.cond, ir.BinOp) and first.cond.op == "||"


def test_vector_swizzles_and_struct_members_address_bytes():
    k = lower("""
struct P { a : u32, v : vec4<f32>, }
@group(0) @binding(0) var<storage, read_write> ps : array<P>;
@compute @workgroup_size(64)
fn main(@builtin(local_invocation_id) lid : vec3<u32>) {
    ps[lid.x].v.z = ps[lid.x].v.xyz.y;
}""")
    (op,) = stmts_of(k, ir.MemOp)
    # P: a at 0, v aligned to 16, size 32. `.v.z` is byte 16 + 8 of element lid.x.
    assert op.access.width == 4
    assert op.access.offset == ir.BinOp("+", ir.BinOp("*", ir.Builtin("tid.x"), ir.Const(32)), ir.Const(24))


def test_functions_are_inlined_with_pointer_parameters():
    k = lower("""
var<workgroup> a : array<f32, 64>;
fn put(p : ptr<workgroup, array<f32, 64>>, i : u32, v : f32) { (*p)[i] = v; }
@compute @workgroup_size(64)
fn main(@builtin(local_invocation_id) lid : vec3<u32>) { put(&a, lid.x, 2.0); }""")
    (op,) = stmts_of(k, ir.MemOp)
    assert op.access.buffer == "a" and op.access.is_write


def test_tvm_source_with_several_modules_lowers_each_kernel():
    # TVM's source for a build holds one module per kernel, each redeclaring PODArgs and podArgs.
    one = """// Function: k{n}
//----------------------------------------
struct PODArgs {{ n: i32, packGridDimX: u32 }}
@group(0) @binding(1) var<uniform> podArgs : PODArgs;
@group(0) @binding(0) var<storage, read_write> A : array<f32>;
@compute @workgroup_size(32, 1, 1)
fn k{n}(@builtin(local_invocation_id) threadIdx : vec3<u32>) {{
  A[i32(threadIdx.x) + podArgs.n] = 0.0f;
}}
"""
    ks = lower_source(one.format(n=1) + one.format(n=2), "wgsl", "t.wgsl")
    assert [k.name for k in ks] == ["k1", "k2"] and all(k.params == ["n", "packGridDimX"] for k in ks)


@pytest.mark.parametrize("src,where,what", [
    ("@compute @workgroup_size(64)\nfn main() {\n  let x = 1 +;\n}\n", "t.wgsl:3:14", "syntax error"),
    ("@compute @workgroup_size(64)\nfn main() {\n  discard;\n}\n", "t.wgsl:3:3", "unsupported construct"),
    ("@compute @workgroup_size(64)\nfn main() {\n  let y = nope + 1;\n}\n", "t.wgsl:3:11", "unknown name 'nope'"),
    ("fn helper() {}\n", "t.wgsl", "no @compute entry point"),
    ("var<workgroup> a : array<f32, 4>\n", "t.wgsl:1:32", "unexpected end of file"),
])
def test_bad_wgsl_is_a_one_line_error_at_its_position(src, where, what, cli, tmp_path):
    path = tmp_path / "t.wgsl"
    path.write_text(src)
    code, out, err = cli("check", str(path))
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1, err
    assert f"{tmp_path}/{where}" in err and what in err, err


def test_block_dim_contradicting_workgroup_size_is_an_error(cli):
    code, _, err = cli("check", str(WGSL / "reduce_tree.wgsl"), "--block-dim", "64")
    assert code == 2 and "contradicts" in err


def test_block_dim_fills_in_an_override_workgroup_size(cli):
    code, report, err = cli("check", str(WGSL / "override_size.wgsl"), "--block-dim", "128", "--format", "json")
    assert code == 1, err
    assert {f["rule"] for f in report["findings"]} == {"write-after-read"}


# ---------- TVM's WebGPU builds ----------

SEED = "tvm.relax.frontend.nn.llm._decode_kernels:_merge_state_inplace"
FIXED = "builders.merge_state_fixed:merge_state_inplace_fixed"


@pytest.mark.parametrize("head_dim", [128, 512])
def test_seed_race_on_S_in_tvms_wgsl(cli, head_dim):
    code, report, err = cli("lint", SEED, "--target", "webgpu", "--param", "num_heads=8",
                            "--param", f"head_dim={head_dim}", "--param", "v_dtype=float32", "--format", "json")
    assert code == 1, err
    found = {(f["rule"], f["first"]["buffer"]) for f in report["findings"] if f["severity"] == "error"}
    assert found == {("write-after-read", "S")}
    (f,) = [f for f in report["findings"] if f["severity"] == "error"]
    assert f["witness"] and f["witness"].get("replayed", True)


def test_fixed_seed_in_tvms_wgsl_needs_a_storage_barrier(cli):
    # TVM's storage_sync("shared") becomes workgroupBarrier(): the threads are ordered, storage is not.
    code, report, err = cli("lint", FIXED, "--target", "webgpu", "--param", "num_heads=8",
                            "--param", "head_dim=256", "--param", "v_dtype=float32", "--format", "json")
    assert code == 0, err
    assert [(f["rule"], f["first"]["buffer"]) for f in report["findings"]] == [("barrier-scope", "S")]
    assert "storageBarrier()" in report["findings"][0]["message"]


def test_tvm_build_hook_checks_webgpu_builds():
    import tvm
    from tvm.relax.frontend.nn.llm._decode_kernels import _merge_state_inplace

    from analyzer.tvm_checks.hook import checking

    seed = _merge_state_inplace(target=tvm.target.Target("webgpu"), num_heads=8, head_dim=256, v_dtype="float16")
    with checking("collect") as session:
        tvm.tirx.build(seed, target="webgpu")
    assert [(f.rule, f.target, f.file) for f in session.findings] == [
        ("write-after-read", "webgpu", "merge_state_inplace.wgsl")]


# Both builders TVM refuses for WebGPU use 64-bit integers, which its WGSL codegen does not support.
INT64 = {"gpu_multinomial_from_uniform", "generic_get_sample_index"}


# The seed's merge_state and the cumsums in the default run; the rest of the corpus in the slow set.
@pytest.mark.parametrize("spec,params", [pytest.param(s, p, id=s.split(":")[1], marks=[] if any(k in s for k in ("merge_state", "cumsum")) else [pytest.mark.slow])
                                         for s, p in builders(128)])
def test_every_webgpu_build_of_the_corpus_parses_and_lowers(spec, params):
    name = spec.split(":")[1]
    if name in INT64:
        with pytest.raises(KernelraceError, match="TVM failed to build .* for webgpu"):
            built(spec, params, "webgpu")
        return
    mod = built(spec, params, "webgpu")
    kernels = lower_source(mod.source, mod.lang, f"{name}.wgsl")
    # TVM's source holds one module per kernel (the cumsum's four, each with its own PODArgs).
    assert sorted(k.name for k in kernels) == sorted(k.name for k in mod.kernels)
    assert all(k.body for k in kernels)


# The prefill attention kernels (2 s each) are the slow set's; the rest, the cumsum's known race
# and the seed's merge_state among them, the default run's.
SLOW_PREFILL = {"_attention_prefill", "_attention_prefill_mla", "_attention_prefill_ragged",
                "_attention_sequence_prefill", "_attention_sequence_prefill_with_mask"}


@pytest.mark.parametrize("spec,params", [pytest.param(s, p, id=s.split(":")[1], marks=[pytest.mark.slow]
                                                      if s.split(":")[1] in SLOW_PREFILL else [])
                                         for s, p in builders(128) if s.split(":")[1] not in INT64])
def test_webgpu_corpus_has_no_error_finding_but_the_known_races(spec, params, monkeypatch):
    # As tests/test_tvm_corpus.py asks of the other targets: the same two real races, nothing else.
    # With TVM's built-in contracts, as `kernelrace llm` checks these builders: without them the
    # prefill kernels' `output` collisions need unsorted indptr contents, and whether the solver
    # names them data-dependent (a warning) or not (an error) at this budget has varied between
    # processes (a follow-up in the closing note).
    monkeypatch.setattr(races, "CROSS_CHECK", True)
    options = with_builtin_contracts(Options(timeout_ms=5000, hints="off"), spec)
    results = check_built(built(spec, params, "webgpu"), options)
    assert_only_known_races(spec, results)
    # Nor a warning: the persistent kernels' walk starts at `blockIdx.z * gridDim.x + blockIdx.x`
    # here, which stays at or above 0 only because an extent is at least 1; without that floor
    # the tile went negative and rows of two batches met.
    assert [f.message for r in results for f in r.findings if f.severity == "warning"] == []


PREPROCESSED = """// a shader a build script expands
#define_import_path my_app::scan
#define WG 64
@group(0) @binding(0) var<storage, read_write> a: array<f32>;
#ifdef USE_HALF
alias T = f16;
#else
alias T = f32;
#endif
@compute @workgroup_size(WG)
fn main(@builtin(local_invocation_id) lid: vec3<u32>) {
  a[lid.x] = T(1.0);
#if SPREAD > 1
  a[lid.x * SPREAD] = 2.0;
#endif
}
"""


def test_preprocessor_directives_expand_with_d_and_keep_the_files_lines(cli, tmp_path):
    shader = tmp_path / "scan.wgsl"
    shader.write_text(PREPROCESSED)
    code, report, err = cli("check", str(shader), "--format", "json")
    assert (code, report["findings"]) == (0, []), err
    code, report, _ = cli("check", str(shader), "-D", "SPREAD=2", "--format", "json")
    assert code == 1
    assert {(f["first"]["line"], f["second"]["line"]) for f in report["findings"]} == {(12, 14)}


def test_a_module_import_is_one_line_naming_it(cli, tmp_path):
    shader = tmp_path / "uses.wgsl"
    shader.write_text("#import bevy_pbr::mesh_functions\n@compute @workgroup_size(1) fn main() {}\n")
    code, _, err = cli("check", str(shader))
    assert code == 2 and err.count("\n") == 1
    assert f"{shader}:1:1: unsupported construct: #import bevy_pbr::mesh_functions" in err


def test_subgroup_builtins_are_the_ir_warps_and_subgroup_operations_unknown_values():
    """`subgroup_invocation_id` and `subgroup_size` are the lane and the subgroup size the GLSL path
    uses (frontend/subgroups.py); `subgroupAdd` exchanges values, so its result is no function of
    the invocation's own operand."""
    k = lower("""
enable subgroups;
@group(0) @binding(0) var<storage, read_write> out : array<f32>;
@compute @workgroup_size(64)
fn main(@builtin(subgroup_invocation_id) lane : u32, @builtin(subgroup_size) n : u32) {
    out[lane] = subgroupAdd(1.0) + f32(n);
}""")
    assert k.subgroup_size_param == "subgroup_size"
    (store,) = [s for s in ir.walk_stmts(k.body) if isinstance(s, ir.MemOp)]
    assert "lane" in repr(store.access.offset)
    assert "result of subgroupAdd" in repr(store.access.value)


@pytest.mark.parametrize("call", ["subgroupBroadcast(tile[lid ^ 1u], 0u)", "subgroupShuffleXor(tile[lid ^ 1u], 1u)",
                                  "quadBroadcast(tile[lid ^ 1u], 2u)", "subgroupExclusiveMul(tile[lid ^ 1u])",
                                  "select(0.0, 1.0, subgroupAny(tile[lid ^ 1u] > 0.0))",
                                  "f32(subgroupBallot(tile[lid ^ 1u] > 0.0).x)"])
def test_reads_in_a_subgroup_operations_arguments_are_accesses(call):
    """The result of a subgroup or quad operation is opaque and names none of its arguments' reads:
    they are statements of their own, so a race on what they read is checked (it was dropped)."""
    k = lower(f"""
enable subgroups;
@group(0) @binding(0) var<storage, read_write> out : array<f32>;
var<workgroup> tile : array<f32, 64>;
@compute @workgroup_size(64)
fn main(@builtin(local_invocation_index) lid : u32) {{
    tile[lid] = 1.0;
    out[lid] = {call};
}}""")
    reads = [a for s in ir.walk_stmts(k.body) if isinstance(s, (ir.Eval, ir.Assign))
             for a in accesses(s.value) if a.buffer == "tile"]
    assert reads and all("op='^'" in repr(a.offset) for a in reads)
