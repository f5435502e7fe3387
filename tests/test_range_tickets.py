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
    return [a for a in ir.accesses(kernel.body) if a.atomic and ir.atomic_op_of(kernel, a) == "rmw"]


def _held(kernel):
    """The draws that are tickets (a signed add of an amount not proven non-negative is none)."""
    return [o for o in ir.ticket_draws(kernel).values() if ir.ticket_holds(kernel, o)]


def test_wgsl_an_unsigned_computed_add_is_a_range_ticket_a_signed_one_is_not():
    (k,) = lower_source(WGSL.format(extra="atomicOr(&bump.failed, 1u);"), "wgsl", "t.wgsl")
    (o,) = _held(k)
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
    (o,) = _held(k)
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
    (o,) = _held(k)
    assert o.fetch.atomic_op == "grow" and o.fetch.buffer == "c" and ir.ticket_holds(k, o)
    assert [a.buffer for a in _rmw(k)] == ["d"]
    # atomicAdd_block may lose another block's update: the counter need not only grow
    (k,) = lower_source(src.replace("o[atomicAdd(d, (int)n)] = 2;", "atomicAdd_block(c, 1u);"), "cuda", "t.cu")
    assert not [o for o in ir.ticket_draws(k).values() if ir.ticket_holds(k, o)]


def test_the_solver_parts_two_threads_ranges_only_where_both_amounts_are_non_negative():
    (k,) = lower_source(WGSL.format(extra=""), "wgsl", "t.wgsl")
    (o,) = _held(k)
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


LOOP = """
__global__ void k(const int *f, int n, unsigned *c, unsigned *o) {
    unsigned once = atomicAdd(c, 1u);
    for (int i = 0; i < n; i++) {
        unsigned r = atomicAdd(c, 1u);
        for (int j = 0; j < n; j++)
            o[r + once + j] = 1;
    }
}
"""


def test_a_draw_is_named_by_the_loops_around_its_atomic_and_parts_from_the_same_threads_other_iterations():
    (k,) = lower_source(LOOP, "cuda", "t.cu")
    loops = ir.draw_loops(k)
    outer = next(s for s in k.body if isinstance(s, ir.Loop))
    by_site = {o.site: loops[o.fetch.id] for o in ir.ticket_draws(k).values()}
    assert sorted(by_site.values()) == [(), (outer.id,)]
    # One site: the same thread's draws in iterations 0 and 1 of the loop around it differ.
    (o,) = [o for o in ir.ticket_draws(k).values() if loops[o.fetch.id]]
    enc = Encoder(k, 32)
    name = ir.ticket_name(o)
    r1, r2 = enc._c_int("r1"), enc._c_int("r2")
    enc._ticket(name, 1, [ir.Const(0), z3.IntVal(0)], r1)
    enc._ticket(name, 2, [ir.Const(0), z3.IntVal(1)], r2)
    same_thread = z3.And([enc.tid[1][d] == enc.tid[2][d] for d in "xyz"])
    s = z3.Solver()
    s.add(*enc.base, same_thread, r1 == r2)
    assert s.check() == z3.unsat
    # The same iteration of one thread is one draw: nothing parts it from itself.
    enc = Encoder(k, 32)
    enc._ticket(name, 1, [ir.Const(0), z3.IntVal(1)], r1)
    enc._ticket(name, 2, [ir.Const(0), z3.IntVal(1)], r2)
    s = z3.Solver()
    s.add(*enc.base, same_thread, r1 == r2)
    assert s.check() == z3.sat


SIGNED = """
__global__ void k(int *c, const unsigned *m, const int *v, int *o, int p, unsigned q) {{
    {decl}
    int r = atomicAdd(c, n);
    o[r] = 1;
}}
"""


def _signed_grows(decl: str) -> bool:
    (k,) = lower_source(SIGNED.format(decl=decl), "cuda", "t.cu")
    (acc,) = [a for a in ir.accesses(k.body) if a.atomic]
    assert acc.atomic_op == "add"
    return ir.atomic_op_of(k, acc) == "grow"


def test_a_signed_amount_grows_its_counter_only_where_the_ir_proves_it_non_negative():
    assert _signed_grows("int n = __popc(m[threadIdx.x]);")
    assert _signed_grows("int n = min(__popc(m[0]), 3) * (int)blockDim.x + (int)(threadIdx.x % 7u);")
    assert _signed_grows("int n = threadIdx.x < 3 ? 2 : __popc(m[1]);")
    assert not _signed_grows("int n = v[threadIdx.x];")               # memory: anything
    assert not _signed_grows("int n = p;")                             # a signed parameter
    assert not _signed_grows("int n = __popc(m[0]) - 1;")              # may be -1
    assert not _signed_grows("int n = 0; for (int i = 0; i < p; i++) n = n + 1;")   # a loop's sum: not proven
    # assigned on one way to the atomic only: on the other it holds anything
    assert not _signed_grows("int n; if (threadIdx.x == 0) n = 1;")
    assert _signed_grows("int n; if (threadIdx.x == 0) n = 1; else n = 2;")
