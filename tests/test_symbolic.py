"""What the symbolic executor knows of loop state it cannot write in closed form."""

import pytest
import z3

from analyzer.analysis.decision.solver import Encoder
from analyzer.analysis.execution.sym import Sym
from analyzer.analysis.execution.symbolic import SymbolicExecutor
from analyzer.frontend import lower_source

# TVM's persistent tile loop: a private counter that starts at 0 and only ever grows (here in an
# inner loop too), read by the loop guard and the address of a store.
KERNEL = """
extern "C" __global__ void k(float* __restrict__ out, int n) {
  int idx[1];
  idx[0] = %s;
  while (1) {
    if (!(idx[0] < n)) { break; }
    while (idx[0] < 3) { %s }
    out[idx[0] * 32 + ((int)threadIdx.x)] = 1.0f;
    idx[0] = idx[0] + 16;
  }
}
"""


def state_bounds(start, inner):
    (kernel,) = lower_source(KERNEL % (start, inner), "cuda", "k.cu")
    kernel.block_dim.update(x=32, y=1, z=1)
    ev = SymbolicExecutor(kernel).run()
    (store,) = [e for e in ev.accesses.values() if e.access.buffer == "out"]

    def syms(t):
        if isinstance(t, Sym) and t.name.startswith("private:idx"):
            yield t
        for x in getattr(t, "args", ()) or (getattr(t, "a", None), getattr(t, "b", None)):
            if x is not None:
                yield from syms(x)
    found = {s.name: s.lower for s in syms(store.offset)}
    for g in store.guard:
        found.update({s.name: s.lower for s in syms(g)})
    assert found, "the store reads no loop state"
    return set(found.values())


@pytest.mark.parametrize("start,inner,low", [
    ("0", "idx[0] = idx[0] + 1;", 0),
    ("((int)blockIdx.x)", "idx[0] = 1 + idx[0];", 0),
    ("5", "idx[0] = idx[0] - (-2);", 5),
    # WebGPU's packed grid: an extent is at least 1, an index at least 0.
    ("((int)(blockIdx.z * gridDim.x + blockIdx.x))", "idx[0] = idx[0] + 1;", 0),
    ("((int)(blockDim.x * gridDim.y))", "idx[0] = idx[0] + 1;", 1),
    ("((int)gridDim.x) - 2", "idx[0] = idx[0] + 1;", -1),    # -1 with one block
])
def test_a_counter_that_only_grows_keeps_its_start_as_a_floor(start, inner, low):
    assert state_bounds(start, inner) == {low}


@pytest.mark.parametrize("start,inner", [
    ("0", "idx[0] = idx[0] - 1;"),                 # shrinks
    ("0", "idx[0] = idx[0] * n;"),                 # a factor of any sign
    ("0", "idx[0] = n;"),                          # overwritten
    ("n", "idx[0] = idx[0] + 1;"),                 # starts anywhere
])
def test_other_loop_state_has_no_floor(start, inner):
    assert state_bounds(start, inner) == {None}


def test_the_tile_schedulers_guarded_subtraction_keeps_a_counter_at_zero_or_above():
    """TVM's persistent prefill: `tile_id -= batch_tiles` only once `batch_tiles <= tile_id`."""
    assert state_bounds("((int)blockIdx.x)", "if (n <= idx[0]) { idx[0] = idx[0] - n; }") == {0}
    assert state_bounds("((int)blockIdx.x)", "if (n < 7) { idx[0] = idx[0] - n; }") == {None}


def test_a_short_circuit_join_guards_the_subtraction_too():
    """SPIR-V joins `a && b` through an OpPhi, which the executor reads as `a ? b : a`."""
    from analyzer import ir
    from analyzer.analysis.execution.loop_facts import at_least
    x, y = Sym("x", True, lower=0), Sym("y", True)
    le = ir.BinOp("<=", y, x)
    other = ir.BinOp("<", x, ir.Param("n"))
    assert at_least(ir.BinOp("-", x, y), 0, (ir.Select(le, other, le),))
    assert at_least(ir.BinOp("-", x, y), 0, (ir.Select(le, other, ir.Const(0)),))
    assert not at_least(ir.BinOp("-", x, y), 0, (ir.Select(other, le, other),))


def test_a_float_accumulator_is_not_taken_for_a_counter(monkeypatch):
    """`acc[0] += 1` on a float array that starts at 0.0f: no floor, and one pass of the loop."""
    src = """
extern "C" __global__ void k(float* __restrict__ out, int n) {
  float acc[1];
  acc[0] = 0.0f;
  for (int i = 0; i < n; ++i) {
    out[((int)threadIdx.x) + ((int)acc[0])] = 1.0f;
    acc[0] = acc[0] + 1;
  }
}
"""
    passes = []
    real = SymbolicExecutor._loop_pass
    monkeypatch.setattr(SymbolicExecutor, "_loop_pass", lambda self, *a, **k: passes.append(1) or real(self, *a, **k))
    (kernel,) = lower_source(src, "cuda", "k.cu")
    kernel.block_dim.update(x=32, y=1, z=1)
    ev = SymbolicExecutor(kernel).run()
    (store,) = [e for e in ev.accesses.values() if e.access.buffer == "out"]
    assert "private:acc" in str(store.offset) and "lower=0" not in str(store.offset)
    assert len(passes) == 1


def test_a_value_assigned_under_a_condition_and_then_its_negation_is_defined():
    """An early return's result is assigned on one side of a branch and then on the other: joined,
    it is one value (a select), not the undefined value that a name one side left unset would be."""
    src = """__global__ void k(float *out) {
        int r;
        int done = 0;
        if (threadIdx.x >= 8) { r = 0; done = 1; }
        if (!done) { r = threadIdx.x + 1; }
        out[r] = 1.0f;
    }"""
    (kernel,) = lower_source(src, "cuda", "k.cu")
    kernel.block_dim.update(x=32, y=1, z=1)
    ev = SymbolicExecutor(kernel).run()
    (store,) = [e for e in ev.accesses.values() if e.access.buffer == "out"]
    enc = Encoder(kernel, 32)
    offset, tid = enc.term(store.offset, 1), enc.builtin("tid.x", 1)
    # the undefined value stays only where neither assignment ran, which no thread reaches
    assert z3.Solver().check(offset != z3.If(tid >= 8, 0, tid + 1) * 4) == z3.unsat
    # a name only one side assigns, read after: undefined where the other side ran
    (kernel,) = lower_source(src.replace("if (!done) { r = threadIdx.x + 1; }", ""), "cuda", "k.cu")
    kernel.block_dim.update(x=32, y=1, z=1)
    (store,) = [e for e in SymbolicExecutor(kernel).run().accesses.values() if e.access.buffer == "out"]
    assert "undef:r" in repr(store.offset)
