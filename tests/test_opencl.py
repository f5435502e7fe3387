"""The OpenCL C dialect of the C front end: the lowering's reading of work-item functions, barriers
and their fence flags, vectors, vload/vstore and atomics, TVM's OpenCL builds, and errors. (The
grammar's conflict-free build is in test_grammars.py, with the other dialects'.)"""

import pytest

from analyzer import ir
from analyzer.analysis.pairing import races
from analyzer.errors import KernelraceError
from analyzer.frontend import lower_source
from analyzer.pipeline import Options, check_built
from analyzer.tvm.corpus import MERGE_STATE, builders
from conftest import FIXTURES, built
from test_tvm_corpus import assert_only_known_races

OPENCL = FIXTURES / "opencl"


def lower(src: str) -> ir.Kernel:
    (k,) = lower_source(src, "opencl", "t.cl")
    return k


def stmts_of(k: ir.Kernel, cls):
    return [s for s in ir.walk_stmts(k.body, updates=True) if isinstance(s, cls)]


def test_work_item_functions_are_thread_and_block_indices():
    k = lower("""
__kernel __attribute__((reqd_work_group_size(16, 4, 1))) void f(__global int* out) {
    out[get_global_id(1) * get_global_size(0) + get_global_id(0)] = get_num_groups(2) + get_local_size(0);
}""")
    assert k.lang == "opencl" and k.block_dim == {"x": 16, "y": 4, "z": 1}
    assert k.warp_size == 1   # no sub-group size is assumed
    (op,) = stmts_of(k, ir.MemOp)
    text = repr(op.access.offset) + repr(op.access.value)
    for name in ("bid.x", "bdim.x", "tid.x", "bid.y", "tid.y", "gdim.x", "gdim.z"):
        assert f"Builtin(name='{name}')" in text
    assert op.access.space == ir.GLOBAL and op.access.width == 4


def test_dimension_chosen_at_run_time_and_out_of_range():
    k = lower("""
__kernel void f(__global int* out, int d) { out[get_local_id(d)] = get_local_id(3) + get_local_size(7); }""")
    (op,) = stmts_of(k, ir.MemOp)
    assert isinstance(op.access.offset, ir.BinOp) and "Select" in repr(op.access.offset)
    assert op.access.value == ir.BinOp("+", ir.Const(0), ir.Const(1)) or "Const(value=1)" in repr(op.access.value)


def test_barriers_order_the_memory_their_fence_flags_name():
    k = lower("""
__kernel void f(__global int* a) {
    barrier(CLK_LOCAL_MEM_FENCE);
    barrier(CLK_GLOBAL_MEM_FENCE);
    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
    work_group_barrier(CLK_GLOBAL_MEM_FENCE, memory_scope_work_group);
    work_group_barrier(CLK_GLOBAL_MEM_FENCE, memory_scope_work_item);
    sub_group_barrier(CLK_LOCAL_MEM_FENCE);
    barrier(CLK_IMAGE_MEM_FENCE);
    mem_fence(CLK_GLOBAL_MEM_FENCE);
    read_mem_fence(CLK_LOCAL_MEM_FENCE);
    write_mem_fence(CLK_LOCAL_MEM_FENCE);
}""")
    got = [(b.scope, b.spaces, b.text) for b in stmts_of(k, ir.Barrier)]
    local, glob = frozenset({ir.SHARED}), frozenset({ir.GLOBAL})
    assert got == [(ir.BLOCK, local, "barrier(CLK_LOCAL_MEM_FENCE)"),
                   (ir.BLOCK, glob, "barrier(CLK_GLOBAL_MEM_FENCE)"),
                   (ir.BLOCK, local | glob, "barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE)"),
                   (ir.BLOCK, glob, "work_group_barrier(CLK_GLOBAL_MEM_FENCE, memory_scope_work_group)"),
                   (ir.BLOCK, frozenset(), "work_group_barrier(CLK_GLOBAL_MEM_FENCE, memory_scope_work_item)"),
                   (ir.WARP, local, "sub_group_barrier(CLK_LOCAL_MEM_FENCE)"),
                   (ir.BLOCK, frozenset(), "barrier(CLK_IMAGE_MEM_FENCE)")]   # fences synchronise no one


def test_address_spaces_of_parameters_locals_and_program_scope():
    k = lower("""
__constant float table[4] = {1.0f, 2.0f, 3.0f, 4.0f};
kernel void f(global float* g, __constant float* c, __local float* scratch, local int* l2) {
    __local float tile[64];
    __private float mine[2];
    local float* p = tile + 4;
    p[get_local_id(0)] = g[0] + c[0] + scratch[0] + table[1];
    mine[0] = l2[0];
}""")
    spaces = {name: b.space for name, b in k.buffers.items()}
    assert spaces["g"] == ir.GLOBAL and spaces["c"] == ir.CONSTANT and spaces["scratch"] == ir.SHARED
    assert spaces["l2"] == ir.SHARED and spaces["tile"] == ir.SHARED and spaces["mine"] == ir.PRIVATE
    writes = [s.access for s in stmts_of(k, ir.MemOp) if s.access.is_write]
    assert writes[0].buffer == "tile" and "Const(value=16)" in repr(writes[0].offset)


def test_vload_and_vstore_access_n_elements_at_offset_times_n():
    k = lower("""
__kernel void f(__global half* h, __global float* x) {
    float4 v = vload4(get_local_id(0), x + 2);
    vstore4(v, 3, x);
    vstore_half2((float2)(1.0f, 2.0f), 1, h);
    float y = vload_half(5, h);
}""")
    accs = [a for s in ir.walk_stmts(k.body, updates=True) for a in _accesses(s)]
    read_x = next(a for a in accs if a.buffer == "x" and not a.is_write)
    assert read_x.width == 16 and repr(read_x.offset).count("Const(value=16)") == 1   # 16 * tid + 8
    write_x = next(a for a in accs if a.buffer == "x" and a.is_write)
    assert write_x.width == 16 and write_x.offset == ir.Const(48)
    write_h = next(a for a in accs if a.buffer == "h" and a.is_write)
    assert write_h.width == 4 and write_h.offset == ir.Const(4)
    read_h = next(a for a in accs if a.buffer == "h" and not a.is_write)
    assert read_h.width == 2 and read_h.offset == ir.Const(10)


def _accesses(s):
    if isinstance(s, ir.MemOp):
        yield s.access
    for e in _exprs(s):
        stack = [e]
        while stack:
            x = stack.pop()
            if isinstance(x, ir.Read):
                yield x.access
            stack.extend(ir.operands(x))


def _exprs(s):
    if isinstance(s, ir.MemOp):
        return [s.access.offset] + ([s.access.value] if s.access.value is not None else [])
    if isinstance(s, (ir.Assign, ir.Eval)):
        return [s.value]
    return []


def test_vector_literals_swizzles_conversions_and_reinterpretation():
    k = lower("""
__kernel void f(__global int* out) {
    int4 v = (int4)(1, (int2)(2, 3), 4);
    float4 w = (float4)(0.5f);
    int2 s = v.s12;
    v.hi = (int2)(7);
    uint u = as_uint(w.x);
    out[v.s3 + s.y + v.odd.x] = convert_int(w.w) + u;
}""")
    (op,) = stmts_of(k, ir.MemOp)
    assigns = {s.target: s.value for s in stmts_of(k, ir.Assign)}
    assert [assigns[f"v.{i}"] for i in range(2)] == [ir.Const(1), ir.Const(2)]
    assert assigns["s.0"] == ir.Var("v.1") and assigns["s.1"] == ir.Var("v.2")
    # v.hi was overwritten with 7 in lanes 2 and 3 after s took lanes 1 and 2
    assert "Var(name='v.3')" in repr(op.access.offset) and "Var(name='s.1')" in repr(op.access.offset)


def test_tvm_mid_expression_declarations_bind_for_the_expression():
    # TVM 0.27 prints `int rmod_N = ...;` inside an expression (right after a parenthesis).
    k = lower("""
__kernel void f(__global int* out, int n) {
    out[((      int rmod_1 = ((convert_int(get_group_id(0))) % n);
      int rdiv_1 = ((convert_int(get_group_id(0))) / n);
select((rdiv_1 - 1), rdiv_1, rmod_1 >= 0) * 4) + (convert_int(get_local_id(0))))] = 1;
}""")
    (op,) = stmts_of(k, ir.MemOp)
    assigns = [s.target for s in stmts_of(k, ir.Assign)]
    assert assigns == ["rmod_1", "rdiv_1"] and "Var(name='rdiv_1')" in repr(op.access.offset)


def test_atomics_are_atomic_accesses():
    k = lower("""
__kernel void f(__global int* c, __global atomic_int* a, __local int* l) {
    int t = atomic_inc(&c[0]);
    atomic_add(&c[1], 2);
    atom_max(&l[0], 3);
    atomic_fetch_add_explicit(&a[0], 1, memory_order_relaxed, memory_scope_device);
    atomic_store_explicit(&a[1], 5, memory_order_release);
    int v = atomic_load(&a[2]);
    atomic_init(&a[3], 0);
}""")
    accs = [a for s in ir.walk_stmts(k.body, updates=True) for a in _accesses(s)]
    kinds = [(a.buffer, a.is_write, a.atomic) for a in accs]
    assert kinds == [("c", True, True), ("c", True, True), ("l", True, True), ("a", True, True), ("a", True, True),
                     ("a", False, True), ("a", True, False)]   # atomic_init is not atomic


@pytest.mark.parametrize("src,what", [
    ("__kernel void f(__global int* o) { o[get_sub_group_local_id(1)] = 1; }", "'get_sub_group_local_id' with 1"),
    ("__kernel void f(__global int* o) { o[0] = sub_group_reserve_read_pipe(o, 1); }", "collective"),
    ("__kernel void f(__global int* o) { o[0] = work_group_reduce_add(o); }", "'work_group_reduce_add' of a pointer"),
    ("__kernel __attribute__((reqd_work_group_size(64))) void f(__global int* o) { o[0] = 1; }",
     "reqd_work_group_size"),
    ("__kernel __attribute__((reqd_work_group_size(64, s, 1))) void f(__global int* o) { o[0] = 1; }",
     "'s', which is not a declared variable"),   # found by the fuzzer: it had no position
    ("__kernel void f(__global float3* o) { o[get_local_id(0)] = (float3)(1.0f); }", "3-lane vectors"),
])
def test_unmodelled_constructs_are_refused_where_they_are(src, what):
    with pytest.raises(KernelraceError, match=f"t.cl:1:[0-9]+: unsupported construct: .*{what}"):
        lower(src)


@pytest.mark.parametrize("src,where,what", [
    ("__kernel void f(__global int* o) { o[0] = ; }\n", "t.cl:1:43", "unexpected ';'"),
    ("void helper(__global int* o) { o[0] = 1; }\n", "t.cl", "no kernel found (no __kernel function)"),
    ("#define N 4\n__kernel void f(__global int* o) { o[N] = 1 }\n", "t.cl:2:45", "unexpected '}'"),
])
def test_bad_opencl_is_a_one_line_error_at_its_position(src, where, what, cli, tmp_path):
    path = tmp_path / "t.cl"
    path.write_text(src)
    code, out, err = cli("check", str(path))
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1, err
    assert f"{tmp_path}/{where}" in err and what in err, err


def test_block_dim_contradicting_reqd_work_group_size_is_an_error(cli):
    code, _, err = cli("check", str(OPENCL / "reduce_tree.cl"), "--block-dim", "64")
    assert code == 2 and "contradicts" in err and "reqd_work_group_size" in err


def test_preprocessed_source_keeps_the_feature_macros(tmp_path, cli):
    path = tmp_path / "t.cl"
    path.write_text("#if defined(cl_khr_fp16) && __OPENCL_VERSION__ >= 200\n#define T half\n#else\n#error no\n#endif\n"
                    "__kernel void f(__global T* o) { o[get_local_id(0)] = o[get_local_id(0) + 1]; }\n")
    code, report, err = cli("check", str(path), "--block-dim", "8", "--format", "json")
    assert code == 1, err
    assert {(f["rule"], f["second"]["line"]) for f in report["findings"]} == {("write-after-read", 6)}


# ---------- TVM's OpenCL builds ----------

FIXED = "builders.merge_state_fixed:merge_state_inplace_fixed"


@pytest.mark.parametrize("head_dim", [128, 512])
def test_seed_race_on_S_in_tvms_opencl(cli, head_dim):
    code, report, err = cli("lint", MERGE_STATE, "--target", "opencl", "--param", "num_heads=8",
                            "--param", f"head_dim={head_dim}", "--param", "v_dtype=float32", "--format", "json")
    assert code == 1, err
    found = {(f["rule"], f["first"]["buffer"]) for f in report["findings"] if f["severity"] == "error"}
    assert found == {("write-after-read", "S")}
    (f,) = [f for f in report["findings"] if f["severity"] == "error"]
    assert f["witness"] and f["witness"].get("replayed", True)
    assert "barrier(CLK_GLOBAL_MEM_FENCE | CLK_LOCAL_MEM_FENCE);" in f["fix"]["text"]
    assert "get_local_id(0) == 0" in f["fix"]["text"] and f["fix"]["removes"] is True


def test_fixed_seed_in_tvms_opencl_needs_a_global_fence(cli):
    # TVM's storage_sync("shared") becomes barrier(CLK_LOCAL_MEM_FENCE): the work-items are ordered,
    # __global memory is not.
    code, report, err = cli("lint", FIXED, "--target", "opencl", "--param", "num_heads=8",
                            "--param", "head_dim=256", "--param", "v_dtype=float32", "--format", "json")
    assert code == 0, err
    assert [(f["rule"], f["first"]["buffer"]) for f in report["findings"]] == [("barrier-scope", "S")]
    assert "barrier(CLK_GLOBAL_MEM_FENCE | CLK_LOCAL_MEM_FENCE)" in report["findings"][0]["message"]


def test_tvm_build_hook_checks_opencl_builds():
    import tvm
    from tvm.relax.frontend.nn.llm._decode_kernels import _merge_state_inplace

    from analyzer.tvm_checks.hook import checking

    seed = _merge_state_inplace(target=tvm.target.Target("opencl"), num_heads=8, head_dim=256, v_dtype="float16")
    with checking("collect") as session:
        tvm.tirx.build(seed, target="opencl")
    assert [(f.rule, f.target, f.file) for f in session.findings] == [
        ("write-after-read", "opencl", "merge_state_inplace.cl")]


# The whole corpus parses (every build at head_dim 128, the prefill kernels with TVM's mid-expression
# declarations); a few kernels are analysed, to keep the test short: the seed, a scan, the decode and a
# prefill kernel with its `rmod_N` bindings.
CORPUS = builders(128)
ANALYSED = ("_merge_state_inplace", "gpu_2d_continuous_cumsum", "_attention_decode", "_attention_sequence_prefill",
            "_copy_single_page")


# The seed's merge_state and the cumsums in the default run; the rest of the corpus in the slow set.
@pytest.mark.parametrize("spec,params", [pytest.param(s, p, id=s.split(":")[1], marks=[] if any(k in s for k in ("merge_state", "cumsum")) else [pytest.mark.slow])
                                         for s, p in CORPUS])
def test_every_opencl_build_of_the_corpus_parses_and_lowers(spec, params):
    mod = built(spec, params, "opencl")
    kernels = lower_source(mod.source, mod.lang, f"{spec.split(':')[1]}.cl")
    assert sorted(k.name for k in kernels) == sorted(k.name for k in mod.kernels)
    assert all(k.body for k in kernels)
    if spec.split(":")[1] == "_attention_sequence_prefill":
        assert "(      int rmod_" in mod.source   # TVM 0.27's mid-expression declarations are there


@pytest.mark.parametrize("spec,params", [pytest.param(s, p, id=s.split(":")[1]) for s, p in CORPUS
                                         if s.split(":")[1] in ANALYSED])
def test_opencl_corpus_has_no_error_finding_but_the_known_races(spec, params, monkeypatch):
    monkeypatch.setattr(races, "CROSS_CHECK", True)
    assert_only_known_races(spec, check_built(built(spec, params, "opencl"), Options(timeout_ms=5000, hints="off")))
