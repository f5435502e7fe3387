"""The solver-free disjointness proof: what it proves, what it leaves to the solver, and that
everything it proves holds, checked against brute force over whole (small) blocks."""

import itertools
import random

import pytest

from analyzer import ir
from analyzer.analysis.execution.events import AccessEvent
from analyzer.analysis.execution.sym import Iter
from analyzer.analysis.pairing.disjoint import Disjointness, _apply

TX, TY = ir.Builtin("tid.x"), ir.Builtin("tid.y")
C = ir.Const
SPAN = ir.Span("k.cu", 1, 1)


def B(op, a, b):
    return ir.BinOp(op, a, b)


def kernel(x, y=1):
    return ir.Kernel("k", "k.cu", "cuda", [], {}, ["n"], block_dim={"x": x, "y": y, "z": 1})


def event(index, elem=2, width=2, guard=(), ident=0):
    access = ir.Access("S", ir.SHARED, index, width, True, SPAN, elem_size=elem, id=ident)
    return AccessEvent(access, B("*", index, C(elem)), None, tuple(guard), (), ident)


def loop_bound(loop, n):
    return B("<", B("+", C(0), B("*", ITERS[loop] if loop < 2 else Iter(loop), C(1))), C(n))


def test_tvm_tile_copy_is_proven_apart():
    """`i*1024 + (tx&7)*128 + j*16 + ty*4 + (tx>>3)`, blocks of 32x4: a bijection from (thread,
    iterations) to elements, which Z3 takes tens of milliseconds to refute a collision of."""
    index = B("+", B("+", B("+", B("+", B("*", Iter(5), C(1024)), B("*", B("&", TX, C(7)), C(128))),
                                B("*", Iter(6), C(16))), B("*", TY, C(4))), B(">>", TX, C(3)))
    guard = (loop_bound(5, 4), loop_bound(6, 2))
    d = Disjointness(kernel(32, 4))
    assert d.apart(event(index, guard=guard), event(index, guard=guard, ident=1))


def test_threads_sharing_an_element_are_not_proven_apart():
    d = Disjointness(kernel(32))
    assert not d.apart(event(B(">>", TX, C(1))), event(B(">>", TX, C(1)), ident=1))


def test_a_dimension_the_index_ignores_collides_unless_a_guard_pins_it():
    d = Disjointness(kernel(32, 4))
    assert not d.apart(event(TX), event(TX, ident=1))
    pinned = (B("==", TY, C(0)),)
    assert d.apart(event(TX, guard=pinned), event(TX, guard=pinned, ident=1))


def test_wide_accesses_overlap_their_neighbours():
    """Four elements from tid.x*2: thread 0's [0, 4) meets thread 1's [2, 6)."""
    d = Disjointness(kernel(32))
    index = B("*", TX, C(2))
    assert not d.apart(event(index, width=8), event(index, width=8, ident=1))
    assert d.apart(event(index, width=4), event(index, width=4, ident=1))


def test_an_offset_between_accesses_is_taken_into_account():
    """S[tx] against S[tx + 32] with 32 threads never meet; with 64 threads they do."""
    a, b = event(TX), event(B("+", TX, C(32)), ident=1)
    assert Disjointness(kernel(32)).apart(a, b)
    assert not Disjointness(kernel(64)).apart(a, b)


def test_residues_the_guards_fix_count():
    """A tree reduction's step: threads with even tid.x read S[tx + 1] and write S[tx]."""
    d = Disjointness(kernel(32, 4))
    row = B("+", B("*", TY, C(32)), TX)
    even = (B("==", B("%", TX, C(2)), C(0)),)
    assert d.apart(event(B("+", row, C(1)), guard=even), event(row, guard=even, ident=1))
    assert d.apart(event(B("+", row, C(1)), guard=(B("==", B("&", TX, C(1)), C(0)),)),
                   event(row, guard=even, ident=1))
    assert not d.apart(event(B("+", row, C(1)), guard=even), event(row, ident=1))


def test_counters_of_two_loops_over_one_row_are_proven_apart():
    """TVM's attention kernels: each thread's row of 32 in shared memory, written in one loop and
    read in another. The counters differ, so only each thread's own range keeps rows apart."""
    d = Disjointness(kernel(32))
    row = B("*", TX, C(32))
    write = event(B("+", row, ITERS[0]), guard=(loop_bound(0, 32),))
    assert d.apart(write, event(B("+", row, ITERS[1]), guard=(loop_bound(1, 32),), ident=1))
    # A counter without a bound, or one past the row, reaches the next thread's row.
    assert not d.apart(write, event(B("+", row, ITERS[1]), ident=1))
    assert not d.apart(write, event(B("+", row, ITERS[1]), guard=(loop_bound(1, 33),), ident=1))
    # A counter in one index only: the rows still keep threads apart, unless the other index
    # leaves its row.
    assert d.apart(write, event(B("+", row, C(31)), ident=1))
    assert not d.apart(write, event(B("+", row, C(32)), ident=1))


def test_what_the_linear_form_cannot_express_goes_to_the_solver():
    d = Disjointness(kernel(32))
    product = B("*", TX, ir.Param("n"))
    assert not d.apart(event(product), event(product, ident=1))
    assert not d.apart(event(TX), event(B("*", TX, C(3)), ident=1))   # different coefficients


def test_a_launch_no_gpu_can_run_goes_to_the_solver_at_once():
    """A fuzzed `LocalSize 113553099385533729079`: no thread-by-thread decoding of that block."""
    d = Disjointness(kernel(10**20))
    assert not d.apart(event(TX), event(TX, ident=1))


# ----- everything proven holds: brute force over small blocks -----

ITERS = (Iter(0), Iter(1))
ATOMS = [TX, TY, B("&", TX, C(3)), B(">>", TX, C(2)), B("%", TX, C(3)), B("/", TX, C(3)), *ITERS,
         B(">>", B("+", B("*", TY, C(4)), TX), C(1)), ir.Param("n")]


def random_index(rng, x, y, extents):
    """Mostly mixed-radix layouts as TVM writes them, some with a coefficient off by one or a digit
    dropped (so threads collide), some arbitrary sums."""
    index = C(rng.randrange(-2, 4))
    if rng.random() < 0.25:
        for atom in rng.sample(ATOMS, rng.randrange(1, 4)):
            index = B("+", index, B("*", atom, C(rng.choice([1, 2, 3, 4, 8, 16, -1]))))
        return index
    split = rng.choice([[(TX, x)], [(B("&", TX, C(3)), 4), (B(">>", TX, C(2)), (x + 3) // 4)],
                        [(B("%", TX, C(3)), 3), (B("/", TX, C(3)), (x + 2) // 3)]])
    digits = split + [(TY, y), (ITERS[0], extents[0]), (ITERS[1], extents[1])]
    rng.shuffle(digits)
    if rng.random() < 0.2:
        digits.pop(rng.randrange(len(digits)))
    coef = 1
    for atom, extent in digits:
        c = coef if rng.random() < 0.85 else max(1, coef + rng.choice([-1, 1]))
        index = B("+", index, B("*", atom, C(c)))
        coef *= extent
    return index


def swap_iters(t):
    """The index with the two loops' counters exchanged: the same layout, walked by the other loop."""
    if isinstance(t, Iter):
        return ITERS[1 - t.loop]
    if isinstance(t, ir.BinOp):
        return B(t.op, swap_iters(t.a), swap_iters(t.b))
    return t


def evaluate(t, env):
    if isinstance(t, ir.Const):
        return t.value
    if isinstance(t, ir.Builtin | ir.Param):
        return env[t.name]
    if isinstance(t, Iter):
        return env[t.loop]
    return _apply(t.op, evaluate(t.a, env), evaluate(t.b, env))


def collide(ea, eb, x, y, extents, n_values):
    """Brute force: two distinct threads running ea and eb on overlapping bytes."""
    def instances(e):
        for tx, ty, i0, i1 in itertools.product(range(x), range(y), range(extents[0]), range(extents[1])):
            env = {"tid.x": tx, "tid.y": ty, 0: i0, 1: i1, "n": n}
            if all(evaluate(g, env) for g in e.guard):
                yield (tx, ty), evaluate(e.offset, env)
    for n in n_values:
        for (t1, o1), (t2, o2) in itertools.product(list(instances(ea)), list(instances(eb))):
            if t1 != t2 and o1 < o2 + eb.access.width and o2 < o1 + ea.access.width:
                return True
    return False


@pytest.mark.parametrize("seed", range(4))
def test_every_pair_proven_apart_never_collides(seed):
    rng = random.Random(seed)
    proven = 0
    for _ in range(150):
        x, y = rng.choice([4, 8, 12]), rng.choice([1, 2, 3])
        extents = (rng.randrange(1, 4), rng.randrange(1, 3))
        guards = [loop_bound(0, extents[0]), loop_bound(1, extents[1])]
        extra = rng.choice([[], [B("==", TY, C(0))], [B("<", TX, C(x // 2))], [B(">=", TX, C(2))],
                            [B("==", B("%", TX, C(2)), C(rng.randrange(2)))],
                            [B("==", C(1), B("&", TX, C(3)))], [B("==", B("%", ITERS[0], C(2)), C(0))]])
        width = rng.choice([2, 2, 2, 4])
        a = event(random_index(rng, x, y, extents), width=width, guard=guards + extra)
        other = rng.choice([a.access.offset, B("+", a.access.offset, C(rng.randrange(-3, 4))),
                            random_index(rng, x, y, extents), swap_iters(a.access.offset)])
        b = event(other, width=rng.choice([2, width]), guard=guards + rng.choice([[], extra]), ident=1)
        if Disjointness(kernel(x, y)).apart(a, b):
            proven += 1
            assert not collide(a, b, x, y, extents, (0, 5)), (a.offset, b.offset, x, y, extents)
    assert proven >= 15   # the check proves things, not only declines
