"""barrier-scope: barriers that order the threads but not the memory their accesses use.

The fixtures (tests/fixtures/metal/*barrier_scope*, *mem_none*, device_loop_carried) carry the
expected lines; these tests check what the findings say, that the pass stays off where every
barrier orders every space, and the Metal front end's reading of `mem_flags`.
"""

import pytest

from analyzer import ir
from analyzer.analysis.execution.concurrency import build_cfg
from analyzer.analysis.execution.symbolic import SymbolicExecutor
from analyzer.analysis.kernel import KernelAnalysis
from analyzer.analysis.pairing.races import PairChecker
from analyzer.frontend import lower_source
from conftest import FIXTURES, fixture_args

METAL = FIXTURES / "metal"
CUDA = FIXTURES / "cuda"


def check(cli, path, *extra):
    code, report, err = cli("check", str(path), *fixture_args(path), *extra, "--format", "json")
    assert code in (0, 1), err
    return code, report


def scope_findings(report):
    return [f for f in report["findings"] if f["rule"] == "barrier-scope"]


def test_threadgroup_barrier_between_device_accesses_is_a_warning_not_a_race(cli):
    # TVM's fixed merge_state as Metal gets it: read S[row], mem_threadgroup barrier, thread 0 writes.
    code, report = check(cli, METAL / "merge_state_barrier_scope.metal")
    assert code == 0                     # a warning only
    (f,) = report["findings"]
    assert (f["rule"], f["severity"]) == ("barrier-scope", "warning")
    assert (f["first"]["kind"], f["first"]["line"]) == ("read", 16)
    assert (f["second"]["kind"], f["second"]["line"], f["second"]["buffer"], f["second"]["memory"]) == \
        ("write", 24, "S", "device")
    msg = f["message"]
    assert "threadgroup_barrier(mem_flags::mem_threadgroup) at line 22" in msg
    assert "does not order device memory" in msg
    assert msg.endswith("use threadgroup_barrier(mem_flags::mem_device | mem_flags::mem_threadgroup)")
    w = f["witness"]
    # Same row (tid.y), different threads; the writer is thread 0 of the row.
    assert w["first_thread"] != w["second_thread"]
    assert w["first_thread"][1] == w["second_thread"][1] and w["second_thread"][0] == 0
    assert w["element"] == w["byte_offset"] // 4
    assert w["barriers"] == [{"line": 22, "col": 5, "text": "threadgroup_barrier(mem_flags::mem_threadgroup)",
                              "scope": "block", "orders": ["threadgroup"], "origin": None}]
    assert any("visible" in n for n in f["notes"])


def test_barrier_ordering_both_spaces_is_clean(cli):
    code, report = check(cli, METAL / "merge_state_barrier_scope_fixed.metal")
    assert code == 0 and report["findings"] == []


def test_mem_none_barrier_hint_adds_the_missing_flag(cli):
    _, report = check(cli, METAL / "threadgroup_mem_none.metal")
    (f,) = scope_findings(report)
    assert f["second"]["memory"] == "threadgroup" and f["first"]["kind"] == "write"
    assert "threadgroup_barrier(mem_flags::mem_none) at line 13 does not order threadgroup memory" in f["message"]
    assert f["message"].endswith("use threadgroup_barrier(mem_flags::mem_threadgroup)")
    w = f["witness"]
    assert (w["second_thread"][0] + 1) % 64 == w["first_thread"][0] == w["element"]


def test_loop_carried_findings_name_the_barrier_on_the_way(cli):
    # The update (line 20) after this iteration's reads passes the barrier at line 18; the next
    # iteration's read (line 16) after the update passes the one at line 22.
    _, report = check(cli, METAL / "device_loop_carried.metal")
    by_line = {f["second"]["line"]: f for f in scope_findings(report)}
    assert set(by_line) == {16, 20}
    war, raw = by_line[20], by_line[16]
    loop = "15"
    # Within one iteration only the barrier at line 18 lies between the read and the update; a
    # witness in a later iteration also crosses the one at line 22.
    same = war["witness"]["first_iterations"][loop] == war["witness"]["second_iterations"][loop]
    assert [b["line"] for b in war["witness"]["barriers"]] == ([18] if same else [18, 22])
    assert 22 in [b["line"] for b in raw["witness"]["barriers"]]
    # The update comes after the read in program order: its reader is in a later iteration.
    assert raw["witness"]["second_iterations"][loop] > raw["witness"]["first_iterations"][loop]


def test_simdgroup_barrier_without_memory_flags(cli):
    # Same simdgroup: the lanes waited, nothing ordered memory -> barrier-scope. The other
    # simdgroup is not synchronised at all -> a race, not this rule's business.
    code, report = check(cli, METAL / "simdgroup_mem_none.metal")
    assert code == 1
    assert sorted((f["second"]["line"], f["rule"]) for f in report["findings"]) == \
        [(16, "barrier-scope"), (17, "read-after-write")]
    (f,) = scope_findings(report)
    assert f["witness"]["same_warp"]
    assert f["message"].endswith("use simdgroup_barrier(mem_flags::mem_threadgroup)")


def test_select_without_the_rule_skips_the_pass(cli):
    _, report = check(cli, METAL / "merge_state_barrier_scope.metal", "--select", "write-after-read")
    assert report["findings"] == []


def _checker(path, lang, block_dim):
    (kernel,) = lower_source(path.read_text(), lang, path.name)
    for d, v in zip("xyz", block_dim):
        kernel.block_dim[d] = v
    ev = SymbolicExecutor(kernel).run()
    checker = PairChecker(kernel, ev, build_cfg(kernel, ev.tracked_conditions), 1000)
    return checker, checker.run()


@pytest.mark.parametrize("path,lang,block_dim", [
    (CUDA / "global_syncthreads.cu", "cuda", (128, 1, 1)),
    (CUDA / "seed_row_scale_fixed.cu", "cuda", (64, 2, 1)),
    (METAL / "merge_state_barrier_scope_fixed.metal", "metal", (64, 2, 1)),
])
def test_no_filtered_view_where_every_barrier_orders_every_shared_space(path, lang, block_dim):
    checker, pairs = _checker(path, lang, block_dim)
    queries = pairs.queries
    assert pairs.barrier_scope() == []
    assert len(checker._views) == 1          # the execution view only
    assert pairs.queries == queries          # and not one solver query more


def test_device_writes_at_own_elements_need_no_query_across_threadgroup_barriers():
    # Device memory is written only at each thread's own element: one cheap query per pair shows
    # two threads never touch the same bytes, so the device-memory view is never computed.
    checker, pairs = _checker(METAL / "tile_loop_threadgroup_barrier.metal", "metal", (64, 1, 1))
    queries = pairs.queries
    assert pairs.barrier_scope() == []
    assert len(checker._views) == 1
    assert pairs.queries - queries <= 1


def test_filtered_view_is_computed_once_per_cut_set():
    checker, pairs = _checker(METAL / "device_loop_carried.metal", "metal", (64, 1, 1))
    assert len(pairs.barrier_scope()) == 2
    assert len(checker._views) == 2          # execution view, device-memory view
    assert pairs.barrier_scope() is pairs.barrier_scope()


METAL_KERNEL = """#include <metal_stdlib>
using namespace metal;
kernel void k(device float* a [[buffer(0)]], uint tid [[thread_position_in_threadgroup]]) {
    %s
}
"""


@pytest.mark.parametrize("call,scope,spaces", [
    ("threadgroup_barrier(mem_flags::mem_none);", ir.BLOCK, set()),
    ("threadgroup_barrier(mem_flags::mem_threadgroup);", ir.BLOCK, {ir.SHARED}),
    ("threadgroup_barrier(mem_flags::mem_device);", ir.BLOCK, {ir.GLOBAL}),
    ("threadgroup_barrier(mem_flags::mem_device | mem_flags::mem_threadgroup);", ir.BLOCK, {ir.SHARED, ir.GLOBAL}),
    ("metal::threadgroup_barrier(metal::mem_flags::mem_threadgroup | metal::mem_flags::mem_device);",
     ir.BLOCK, {ir.SHARED, ir.GLOBAL}),
    ("threadgroup_barrier(mem_flags::mem_device_and_threadgroup);", ir.BLOCK, {ir.SHARED, ir.GLOBAL}),
    ("threadgroup_barrier(mem_flags::mem_threadgroup_imageblock);", ir.BLOCK, set()),
    ("threadgroup_barrier(mem_flags::mem_texture);", ir.BLOCK, set()),
    ("simdgroup_barrier(mem_flags::mem_none);", ir.WARP, set()),
    ("simdgroup_barrier(mem_flags::mem_threadgroup);", ir.WARP, {ir.SHARED}),
])
def test_metal_mem_flags(call, scope, spaces):
    (kernel,) = lower_source(METAL_KERNEL % (call + "   // a comment"), "metal", "k.metal")
    (b,) = [s for s in ir.walk_stmts(kernel.body) if isinstance(s, ir.Barrier)]
    assert (b.scope, set(b.spaces)) == (scope, spaces)
    assert b.text == call.rstrip(";")          # the call alone: no `;`, no comment


def _hint(lang, barrier, space):
    kernel = ir.Kernel("k", "k", lang, [], {}, [])
    return KernelAnalysis(kernel, None, None).scope_hint((barrier,), space)


def test_hints_per_dialect():
    tg = ir.Barrier(ir.BLOCK, frozenset({ir.SHARED}), ir.Span("k", 1, 1))
    none = ir.Barrier(ir.BLOCK, frozenset(), ir.Span("k", 1, 1))
    assert _hint("metal", tg, ir.GLOBAL) == \
        "use threadgroup_barrier(mem_flags::mem_device | mem_flags::mem_threadgroup)"
    assert _hint("metal", none, ir.SHARED) == "use threadgroup_barrier(mem_flags::mem_threadgroup)"
    assert _hint("spirv", tg, ir.GLOBAL) == ("add UniformMemory (0x40) to the barrier's memory semantics, "
                                             "e.g. memoryBarrierBuffer() before barrier() in GLSL")
    assert _hint("spirv", none, ir.SHARED).startswith("add WorkgroupMemory (0x100) to the barrier's memory semantics")
    assert "__syncthreads()" in _hint("cuda", none, ir.GLOBAL)




def test_glsl_barrier_alone_does_not_order_a_storage_buffer(cli):
    code, report = check(cli, FIXTURES / "vulkan" / "buffer_barrier.comp")
    assert code == 0
    (f,) = report["findings"]
    assert f["rule"] == "barrier-scope" and f["second"]["kind"] == "write"
    assert "UniformMemory (0x40)" in f["message"] and "memoryBarrierBuffer()" in f["message"]


def test_glsl_control_barrier_without_semantics_does_not_order_workgroup_memory(cli, tmp_path):
    src = tmp_path / "relaxed_barrier.comp"
    src.write_text("""#version 450
#extension GL_KHR_memory_scope_semantics : require
layout(local_size_x = 64) in;
layout(std430, set = 0, binding = 0) buffer B { float data[]; };
shared float tile[64];
void main() {
    uint t = gl_LocalInvocationID.x;
    tile[t] = data[gl_WorkGroupID.x * 64 + t];
    controlBarrier(gl_ScopeWorkgroup, gl_ScopeWorkgroup, gl_StorageSemanticsNone, gl_SemanticsRelaxed);
    data[gl_WorkGroupID.x * 64 + t] = tile[(t + 1) % 64];
}
""")
    code, report, err = cli("check", str(src), "--format", "json")
    assert code == 0, err
    (f,) = report["findings"]
    assert f["rule"] == "barrier-scope" and f["second"]["kind"] == "read"
    assert f["second"]["origin"]["line"] == 10
    assert "WorkgroupMemory (0x100)" in f["message"] and "memoryBarrierShared()" in f["message"]


def test_a_branch_no_thread_takes_passes_no_barrier(cli, tmp_path):
    """`if (6 > 5)`: the else branch's barrier, which orders nothing, is on no thread's path, so
    the device write is ordered by the barrier after it (found by the differential campaign: the
    witness went through the dead branch and did not replay)."""
    path = tmp_path / "k.metal"
    path.write_text("""#include <metal_stdlib>
using namespace metal;
kernel void k(device float* g [[buffer(0)]], uint3 tid [[thread_position_in_threadgroup]]) {
    for (int r = 1; r < 3; r += 1) {
        if (6 > 5) {
            threadgroup_barrier(mem_flags::mem_device);
        } else {
            threadgroup_barrier(mem_flags::mem_none);
        }
        g[r + tid.x] = (float)tid.x;
    }
}
""")
    code, report, _ = cli("check", str(path), "--block-dim", "4", "--format", "json", "--no-config")
    assert code == 0 and report["findings"] == []
