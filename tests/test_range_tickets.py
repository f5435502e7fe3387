"""Range tickets (frontend/atomics.py, analysis/decision/tickets.py): a fetch-add of a computed
unsigned amount, in every dialect, and when its counter only grows. The verdicts on programs are
the fixtures' (`*/range_ticket*`); these pin the IR and the facts' conditions."""

import z3

from analyzer import ir
from analyzer.analysis.decision import tickets
from analyzer.analysis.decision.solver import Encoder
from analyzer.frontend import lower_source
from analyzer.frontend.spirv_tools import compile_glsl, disassemble

WGSL = """
struct Bump {{ failed: atomic<u32>, segs: atomic<u32>, signed: atomic<i32> }}
@group(0) @binding(0) var<storage, read_write> bump: Bump;
@group(0) @binding(1) var<storage, read_write> out: array<u32>;
@compute @workgroup_size(64)
fn main(@builtin(local_invocation_id) lid: vec3<u32>) {{
  let n = out[lid.x];
  let r = atomicAdd(&bump.segs, n);
  let s = atomicAdd(&bump.signed, i32(n));
  {extra}
  out[r] = 1u;
  out[u32(s)] = 2u;
}}
"""


def _rmw(kernel):
    return [a for a in ir.accesses(kernel.body) if a.atomic and a.atomic_op == "rmw"]


def test_wgsl_an_unsigned_computed_add_is_a_range_ticket_a_signed_one_is_not():
    (k,) = lower_source(WGSL.format(extra="atomicOr(&bump.failed, 1u);"), "wgsl", "t.wgsl")
    (o,) = ir.ticket_draws(k).values()
    assert o.fetch.atomic_op == "grow" and o.amount is not None and o.fetch.offset == ir.Const(4)
    assert ir.ticket_name(o).endswith("r")
    # the signed counter's add of a computed amount may move it down: the thread's own value (and
    # `failed`'s atomicOr, at offset 0, a read-modify-write)
    assert {a.offset.value for a in _rmw(k)} == {8, 0}
    # `failed`, another member set atomically, leaves the counter's element alone
    assert ir.ticket_holds(k, o) and tickets.range_draw(k, ir.ticket_name(o)) is o


def test_a_write_that_may_reach_the_counter_takes_the_fact_away():
    # an exchange at a computed offset of the buffer may land on the counter
    text = WGSL.replace("var<storage, read_write> bump: Bump;", "var<storage, read_write> bump: array<atomic<u32>>;")
    text = text.replace("&bump.segs", "&bump[1]").replace("&bump.signed", "&bump[2]")
    (k,) = lower_source(text.format(extra="atomicExchange(&bump[n], 0u);").replace("i32(n)", "n").replace(
        "u32(s)", "s"), "wgsl", "t.wgsl")
    assert not [o for o in ir.ticket_draws(k).values() if ir.ticket_holds(k, o)]
    # a fetch-sub of the counter moves it down
    (k,) = lower_source(WGSL.format(extra="atomicSub(&bump.segs, 1u);"), "wgsl", "t.wgsl")
    assert not [o for o in ir.ticket_draws(k).values() if ir.ticket_holds(k, o)]


def test_glsl_a_uint_counter_is_a_range_ticket_an_int_one_is_not():
    src = """#version 450
layout(local_size_x = 64) in;
layout(std430, binding = 0) buffer B { uint u; int i; } bump;
layout(std430, binding = 1) buffer O { uint o[]; };
void main() {
  uint n = o[gl_LocalInvocationID.x];
  uint r = atomicAdd(bump.u, n);
  int s = atomicAdd(bump.i, int(n));
  o[r] = 1u;
  o[uint(s)] = 2u;
}
"""
    (k,) = lower_source(disassemble(compile_glsl(src, "t.comp"), "t.spv"), "spirv", "t.spvasm")
    (o,) = ir.ticket_draws(k).values()
    assert o.fetch.atomic_op == "grow" and o.fetch.offset == ir.Const(0)
    assert [a.offset for a in _rmw(k)] == [ir.Const(4)]


def test_cuda_an_unsigned_atomic_add_is_a_range_ticket_a_block_scoped_one_breaks_it():
    src = """
__global__ void k(unsigned *c, int *d, unsigned *o) {
    unsigned n = o[threadIdx.x];
    o[atomicAdd(c, n)] = 1;
    o[atomicAdd(d, (int)n)] = 2;
}
"""
    (k,) = lower_source(src, "cuda", "t.cu")
    (o,) = ir.ticket_draws(k).values()
    assert o.fetch.atomic_op == "grow" and o.fetch.buffer == "c" and ir.ticket_holds(k, o)
    assert [a.buffer for a in _rmw(k)] == ["d"]
    # atomicAdd_block may lose another block's update: the counter need not only grow
    (k,) = lower_source(src.replace("o[atomicAdd(d, (int)n)] = 2;", "atomicAdd_block(c, 1u);"), "cuda", "t.cu")
    assert not [o for o in ir.ticket_draws(k).values() if ir.ticket_holds(k, o)]


def test_the_solver_parts_two_threads_ranges_only_where_both_amounts_are_non_negative():
    (k,) = lower_source(WGSL.format(extra=""), "wgsl", "t.wgsl")
    (o,) = ir.ticket_draws(k).values()
    enc = Encoder(k, 32)
    name = ir.ticket_name(o)
    n1, n2 = z3.Ints("n1 n2")
    r1, r2 = enc._c_int("r1"), enc._c_int("r2")
    enc._ticket(name, 1, [ir.Const(4), n1], r1)
    enc._ticket(name, 2, [ir.Const(4), n2], r2)
    differ = enc.tid[1]["x"] != enc.tid[2]["x"]
    s = z3.Solver()
    s.add(*enc.base, differ, n1 == 3, n2 == 2)
    s.push()
    s.add(r1 <= r2, r2 < r1 + 3)        # thread 2's range starts inside thread 1's
    assert s.check() == z3.unsat
    s.pop()
    s.add(r2 == r1 + 3)                 # right after it: fine
    assert s.check() == z3.sat
    # an amount the IR computes negative (a u32 subtraction that wraps) says nothing
    s = z3.Solver()
    s.add(*enc.base, differ, n1 == -1, n2 == 2, r1 == r2)
    assert s.check() == z3.sat
