"""The IR interpreter (analyzer/dynamic/) and `kernelrace confirm` (analyzer/command/confirm.py)."""

from __future__ import annotations

import json

import jsonschema
import numpy as np
import pytest

from analyzer.dynamic import schedule
from analyzer.dynamic.launch import make_launch
from analyzer.dynamic.values import BF16, F16, InterpretError, as_kind
from analyzer.frontend import lower_source
from conftest import FIXTURES, TESTS

# Long: in the slow set, which .ci/run runs after the default run (pyproject.toml's markers).
pytestmark = pytest.mark.slow

SEED_BUILDER = "tvm.relax.frontend.nn.llm._decode_kernels:_merge_state_inplace"
CUMSUM = "tvm.relax.backend.gpu_generic:gpu_2d_continuous_cumsum"


def kernel(src: str, block=(64, 1, 1), lang="cuda"):
    k = lower_source(src, lang, "k.cu")[0]
    k.block_dim = dict(zip("xyz", block))
    k.grid_dim = {"x": 1, "y": 1, "z": 1}
    return k


def test_half_and_bf16_round_as_the_device_does():
    assert float(as_kind(1.0 + 2**-11, F16)) == 1.0            # below half's precision: rounds down
    assert float(as_kind(1.0 + 2**-8, BF16)) == 1.0             # bf16 keeps 8 significant bits
    assert float(as_kind(1.0 + 3 * 2**-8, BF16)) == 1.0 + 2**-6  # ties to even, upwards here
    src = """extern "C" __global__ void k(half* a, half* b) {
        b[threadIdx.x] = a[threadIdx.x] + a[threadIdx.x + 64]; }"""
    k = kernel(src)
    run = schedule.run(k, make_launch(k), list(range(64)), [(0, 0, 0)])
    assert all(isinstance(v, np.float16) for v in run.memory["b"].values())


def test_the_schedule_decides_what_a_racy_scan_computes():
    # Each thread adds its left neighbour's element in place: ascending order reads the
    # neighbour's new value (a prefix sum of the whole row), descending its old one.
    src = """extern "C" __global__ void k(int* out) {
        __shared__ int s[64];
        s[threadIdx.x] = 1;
        __syncthreads();
        if (threadIdx.x > 0) s[threadIdx.x] = s[threadIdx.x] + s[threadIdx.x - 1];
        __syncthreads();
        out[threadIdx.x] = s[threadIdx.x]; }"""
    k = kernel(src)
    launch = make_launch(k)
    up = schedule.run(k, launch, schedule.order("ascending", launch), [(0, 0, 0)])
    down = schedule.run(k, launch, schedule.order("descending", launch), [(0, 0, 0)])
    assert [up.memory["out"][i] for i in range(4)] == [1, 2, 3, 4]
    assert [down.memory["out"][i] for i in range(4)] == [1, 2, 2, 2]
    assert {r.lines for r in up.races} == {frozenset({5})}
    # witness order: thread 2 first, then 1, then the rest ascending
    assert schedule.order("witness", launch, 0, ((2, 0, 0), (1, 0, 0)))[:4] == [2, 1, 0, 3]


def test_a_barrier_separates_and_a_shared_only_barrier_does_not_order_global_memory():
    src = """kernel void k(device float* g [[buffer(0)]], uint t [[thread_position_in_threadgroup]]) {
        threadgroup float s[64];
        s[t] = g[t];
        g[t] = 1.0f;
        threadgroup_barrier(mem_flags::mem_threadgroup);
        g[(t + 1) % 64] = s[(t + 1) % 64]; }"""
    k = kernel(src, lang="metal")
    launch = make_launch(k)
    races = schedule.run(k, launch, schedule.order("ascending", launch), [(0, 0, 0)]).races
    assert {(r.buffer, r.lines) for r in races} == {("g", frozenset({4, 6}))}


def test_1024_threads_run_in_seconds_and_large_loops_ask_for_a_smaller_define():
    src = """extern "C" __global__ void k(float* a, int n) {
        __shared__ float s[1024];
        s[threadIdx.x] = a[threadIdx.x];
        __syncthreads();
        float acc = 0.0f;
        for (int i = 0; i < n; ++i) acc += s[(threadIdx.x + i) % 1024];
        a[threadIdx.x] = acc; }"""
    k = kernel(src, block=(1024, 1, 1))
    launch = make_launch(k, {"n": 8})
    run = schedule.run(k, launch, schedule.order("random", launch, 3), [(0, 0, 0)])
    assert len(run.written["a"]) == 1024 and run.races == []
    with pytest.raises(InterpretError, match=r"smaller --scalar"):
        big = make_launch(k, {"n": 10**6})
        schedule.run(k, big, schedule.order("ascending", big), [(0, 0, 0)])
    with pytest.raises(InterpretError, match=r"--scalar n=N"):
        make_launch(k)


def test_an_unmodelled_construct_is_named_with_its_line(cli):
    path = FIXTURES / "cuda" / "syncwarp_cross_warp.cu"
    src = """extern "C" __global__ void k(float* a) {
        float v = __shfl_xor_sync(0xffffffff, a[threadIdx.x], 1);
        a[threadIdx.x] = v; }"""
    k = kernel(src, block=(32, 1, 1))
    with pytest.raises(InterpretError, match=r"result of __shfl_xor_sync at k.cu:2"):
        launch = make_launch(k)
        schedule.run(k, launch, schedule.order("ascending", launch), [(0, 0, 0)])
    assert path.exists()


def _confirmations(report):
    return [f["confirmation"] for f in report["findings"] if "confirmation" in f]


def test_confirm_shows_the_outputs_a_fixture_race_changes(cli, tmp_path):
    path = FIXTURES / "cuda" / "neighbour_shift.cu"
    code, report, err = cli("confirm", str(path), "--block-dim", "128", "--format", "json")
    assert code == 1, err
    (c,) = _confirmations(report)
    assert c["status"] == "differs" and c["race_observed"] and c["against"] == "the fix hint applied"
    (out,) = c["buffers"]
    assert out["buffer"] == "out" and out["differ"] > 100 and out["elements"] == 128
    assert c["fixed"]["differs_between_orders"] is False and c["fixed"]["races"] == []
    # the fixed twin: nothing to confirm, and the same command succeeds
    code, report, _ = cli("confirm", str(path.with_name("neighbour_shift_fixed.cu")), "--block-dim", "128",
                          "--format", "json")
    assert code == 0 and _confirmations(report) == []
    # --confirm on check gives the same; the SARIF carries it and still validates
    sarif = tmp_path / "out.sarif"
    code, _, err = cli("check", "--confirm", str(path), "--block-dim", "128", "--format", "sarif", "-o", str(sarif))
    doc = json.loads(sarif.read_text())
    jsonschema.validate(doc, json.loads((TESTS / "data" / "sarif-schema-2.1.0.json").read_text()))
    assert doc["runs"][0]["results"][0]["properties"]["confirmation"]["status"] == "differs"
    code, text, _ = cli("confirm", str(path), "--block-dim", "128")
    assert "confirm: ran block (0,0,0)" in text and "out: " in text and "elements differ" in text


def test_confirm_says_when_it_cannot_run(cli):
    path = FIXTURES / "wgsl" / "override_size.wgsl"
    code, report, err = cli("confirm", str(path), "--format", "json")
    cs = _confirmations(report)
    assert cs and all(c["status"] == "cannot-run" and "symbolic" in c["reason"] for c in cs)


def test_confirm_on_the_seed_builder_shows_s_and_v_corrupted_and_not_with_the_fix(cli):
    code, report, err = cli("confirm", SEED_BUILDER, "--param", "num_heads=8", "--param", "head_dim=256",
                            "--param", "v_dtype=float32", "--target", "cuda", "--scalar", "D=256", "--scalar", "H=8",
                            "--scalar", "N=1", "--format", "json")
    assert code == 1, err
    (c,) = _confirmations(report)
    differ = {b["buffer"]: (b["differ"], b["elements"]) for b in c["buffers"]}
    assert differ["S"] == (8, 8) and differ["V"][0] > 1000 and differ["V"][1] == 2048
    assert c["fixed"] == {"differs_between_orders": False, "buffers": [], "races": []}


def test_confirm_on_the_cumsum_shows_wrong_prefix_sums(cli):
    code, report, err = cli("confirm", CUMSUM, "--target", "cuda", "--scalar", "m=1", "--scalar", "n=512",
                            "--scalar", "i=0", "--format", "json")
    assert code == 1, err
    first_kernel = [f for f in report["findings"] if f["kernel"] == "gpu_2d_continuous_cumsum_kernel"]
    outs = [b for f in first_kernel for b in f["confirmation"]["buffers"] if b["buffer"] == "Out"]
    assert outs and all(b["differ"] > 400 and b["elements"] == 512 for b in outs)


def test_the_cumsum_is_right_in_lockstep_and_wrong_one_thread_at_a_time():
    """The scan is correct only while its threads advance together; run one at a time, every
    element from column 8 on is wrong (the PoCL numbers of the issue show the same)."""
    from analyzer.pipeline import built_kernels
    from analyzer.tvm.build import build

    k = built_kernels(build(CUMSUM, {}, "cuda"))[0]
    launch = make_launch(k, {"m": 1, "n": 512})
    ascending = schedule.order("ascending", launch)
    lock = schedule.run(k, launch, ascending, [(0, 0, 0)], lockstep=True)
    alone = schedule.run(k, launch, ascending, [(0, 0, 0)])
    a = [lock.memory["A_ptr"][i] for i in range(512)]
    want = list(np.cumsum(a))
    assert [lock.memory["Out_ptr"][i] for i in range(512)] == want
    wrong = [i for i in range(512) if alone.memory["Out_ptr"][i] != want[i]]
    assert wrong[0] == 8 and len(wrong) > 480


def _confirmed(path) -> dict[str, str]:
    """The confirmation status of each race finding of one fixture, by `file:line`."""
    from analyzer.cli import build_parser
    from analyzer.command.confirm import confirm_results
    from analyzer.pipeline import Options, analyse_kernel, read_source, text_kernels
    from conftest import fixture_args

    ns = build_parser().parse_args(["check", str(path), *fixture_args(path)])
    text, lang, name = read_source(str(path), ns.lang)
    kernels, _ = text_kernels(text, lang, name, ns.block_dim, ns.grid_dim, dict(ns.define), Options(), str(path))
    pairs = [(k, analyse_kernel(k, Options(hints="auto"))) for k in kernels]
    confirm_results(pairs, {})
    return {f"{path.name}:{f.second.line}": f.confirmation["status"]
            for _, r in pairs for f in r.findings if f.confirmation}


def test_every_racy_fixture_is_confirmed():
    """Every race finding of a fixture that the interpreter can run changes the output in the
    order its witness gives. Left: a workgroup size set by an override constant; structs whose
    members have different types (the interpreter keeps one element type per buffer); what the IR
    leaves uninterpreted and the interpreter cannot compute (a pure device function kept as a
    call, cuRAND generators, `__syncthreads_count`'s result); goto_forward, whose racing
    branch needs `a[0] > 5`, which the seeded inputs do not give; and the two counters of
    vulkan/atomics.comp, whose seeded initial values keep their tickets apart (the race is
    observed, the output does not change); reread_index.cu's rewrite of its own slot, which the
    other threads' second reads see or miss with the same tile element when the seeded slot and
    its successor rotate alike; opencl/segments.cl, whose launch gives the grid only (the
    block extent stays symbolic, and a run needs one), and vulkan/spec_shared_size.comp, whose
    workgroup size is a specialization constant left unbound; and the subgroup fixtures (GLSL and
    WGSL), whose subgroupAdd exchanges values between invocations, which the interpreter does not
    compute, nor a shuffle's or a SIMD-group sum's (shfl_of_shared, simd_partials_3d,
    simd_sum_of_shared), nor a collective's of a shared tile (subgroup_of_shared in GLSL and WGSL,
    work_group_of_local, cg_tile_of_shared's tile shuffle and cg::reduce); param_row_image, whose row length is a parameter the fixture leaves
    symbolic; wgsl/range_ticket's counter struct, whose `atomic<u32>` and `u32` members the
    interpreter would keep as one 8-byte element; wgsl/binding_array_buffers, each of whose
    buffers starts where an uninterpreted function of its index says, which the interpreter
    cannot compute; integral_float_values' float parameter, whose two stores differ only at -0.0f,
    which the seeded inputs do not give; and unwritten_element_values' stores of `buf[10] + 1.0f`,
    which differ only when a load runs between thread 10's write and another's."""
    from conftest import map_in_processes

    paths = sorted(p for p in FIXTURES.rglob("*") if p.suffix in (".cu", ".metal", ".cl", ".comp", ".spvasm", ".wgsl")
                   and not p.stem.endswith("_fixed"))
    statuses = {}
    for found in map_in_processes(_confirmed, paths):      # both cores
        statuses.update(found)
    assert len(statuses) >= 45
    assert {k: v for k, v in statuses.items() if v != "differs"} == {
        "override_size.wgsl:19": "cannot-run", "struct_copy.cu:10": "cannot-run", "struct_members.cu:14": "cannot-run",
        "base_class.cu:17": "cannot-run", "template_host_name.metal:20": "cannot-run",
        "attributes_do_while.cu:16": "cannot-run", "curand_states.cu:15": "cannot-run",
        "syncthreads_count.cu:10": "cannot-run", "goto_forward.cu:10": "no-difference",
        "atomics.comp:170": "no-difference", "reread_index.cu:13": "no-difference",
        "segments.cl:12": "cannot-run", "spec_shared_size.comp:117": "cannot-run",
        "subgroup_leader.comp:123": "cannot-run", "subgroup_leader.wgsl:15": "cannot-run",
        "shfl_of_shared.cu:10": "cannot-run", "simd_partials_3d.metal:18": "cannot-run",
        "simd_sum_of_shared.metal:13": "cannot-run", "param_row_image.cu:7": "cannot-run",
        "subgroup_of_shared.wgsl:14": "cannot-run", "subgroup_of_shared.comp:126": "cannot-run",
        "work_group_of_local.cl:9": "cannot-run", "cg_tile_of_shared.cu:12": "cannot-run",
        "cg_tile_of_shared.cu:20": "cannot-run",
        "integral_float_values.cu:18": "no-difference", "unwritten_element_values.cu:16": "no-difference",
        "range_ticket.wgsl:18": "cannot-run", "range_ticket.wgsl:27": "cannot-run",
        "range_ticket.wgsl:41": "cannot-run", "binding_array_buffers.wgsl:10": "cannot-run"}


def test_a_reinterpreting_access_moves_bytes():
    """TVM's kernels store a float through a half buffer (`((float*)K_smem)[i] = x`) and read
    a float4 of a float buffer (`vin[t].x`): the bytes move, as on the device."""
    src = """extern "C" __global__ void k(const float* in, float* out) {
        __shared__ half buf[128];
        ((float*)buf)[threadIdx.x] = in[threadIdx.x] * 2.0f;
        __syncthreads();
        const float4* v = reinterpret_cast<const float4*>(in);
        out[threadIdx.x] = ((float*)buf)[threadIdx.x] + v[threadIdx.x].y; }"""
    k = kernel(src)
    launch = make_launch(k)
    run = schedule.run(k, launch, schedule.order("ascending", launch), [(0, 0, 0)])
    ins = run.memory["in"]
    assert all(run.memory["out"][i] == np.float32(ins[i] * np.float32(2)) + ins[4 * i + 1] for i in range(64))
