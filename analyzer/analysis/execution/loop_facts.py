"""Facts of loops and statements the symbolic executor reads: bounds of terms, loops that end,
invariants, assigned names, closed forms of inductions, joins of branch states."""

from __future__ import annotations

from analyzer import ir
from analyzer.analysis.decision import division_forms, power_bits
from analyzer.analysis.execution.sym import Iter, Sym
from analyzer.analysis.execution.terms import at_first_iteration, negate


ALL_DIMS = frozenset(("tid.x", "tid.y", "tid.z"))
NO_DIMS: frozenset = frozenset()


def norm_dims(dims) -> frozenset:
    """Every thread builtin is a function of the three thread indices: those suffice."""
    return ALL_DIMS if ALL_DIMS <= dims else frozenset(dims)


def cell_name(key) -> str:
    """`buf+8` for the cell at byte 8, `buf[at3]` for one at the 3rd symbolic offset."""
    buf, at, _ = key
    return f"{buf}+{at}" if isinstance(at, int) else f"{buf}[at{at[1]}]"


def lower_bound(t) -> int | None:
    """A value the term never goes below, where one is plain (a constant, an index, a counter,
    a sum of those)."""
    if isinstance(t, ir.Const):
        return t.value
    if isinstance(t, ir.Builtin) and t.name.startswith(("tid.", "bid.")):
        return 0
    if isinstance(t, ir.Builtin) and t.name.startswith(("bdim.", "gdim.")):
        return 1    # an extent: a launch with none runs no thread to see it
    if isinstance(t, Sym):
        return t.lower
    if isinstance(t, ir.BinOp) and t.op == "+":
        a, b = lower_bound(t.a), lower_bound(t.b)
        return None if a is None or b is None else a + b
    if isinstance(t, ir.BinOp) and t.op == "-" and isinstance(t.b, ir.Const):
        a = lower_bound(t.a)
        return None if a is None else a - t.b.value
    if isinstance(t, ir.BinOp) and t.op == "*":
        a, b = lower_bound(t.a), lower_bound(t.b)
        return a * b if a is not None and b is not None and a >= 0 and b >= 0 else None
    if isinstance(t, Iter):
        return 0
    return None


# Element types of private arrays that hold no index (their cells get no floor).
FLOATING = ("float", "half", "double", "bfloat", "nv_bfloat", "__half", "__nv_bfloat")


def floor_shaped(stmts, floating: set) -> set:
    """Keys ("var", name) of variables stored in `stmts` only as themselves plus a constant or
    minus something, and ("cell", (buffer, offset, width)) of integer private cells stored at a
    constant offset (SPIR-V stores a temporary: their values are checked as terms)."""
    def shaped(value, is_self) -> bool:
        return isinstance(value, ir.BinOp) and (
            (value.op == "-" and is_self(value.a))
            or (value.op == "+" and ((is_self(value.a) and isinstance(value.b, ir.Const))
                                     or (is_self(value.b) and isinstance(value.a, ir.Const)))))

    good: set = set()
    bad: set = set()
    for s in ir.walk_stmts(stmts, updates=True):
        if isinstance(s, ir.Assign):
            key = ("var", s.target)
            ok = shaped(s.value, lambda e: isinstance(e, ir.Var) and e.name == s.target)
        elif isinstance(s, ir.MemOp) and s.access.space == ir.PRIVATE and s.access.is_write:
            acc = s.access
            if not isinstance(acc.offset, ir.Const):
                bad.add(("array", acc.buffer))
                continue
            key = ("cell", (acc.buffer, acc.offset.value, acc.width))
            ok = acc.buffer not in floating
        else:
            continue
        (good if ok else bad).add(key)
    return {k for k in good - bad if not (k[0] == "cell" and ("array", k[1][0]) in bad)}


def at_least(value, floor: int, guard: tuple) -> bool:
    """Is `value` at or above `floor` wherever the guard holds? A plain lower bound, or `x - y`
    stored under `y <= x` (TVM's tile scheduler: `tile_id -= batch_tiles` once `batch_tiles <= tile_id`)."""
    low = lower_bound(value)
    if low is not None and low >= floor:
        return True
    if isinstance(value, ir.BinOp) and value.op == "-" and floor <= 0:
        return any(_implies_at_most(g, value.b, value.a) for g in guard)
    return False


def _implies_at_most(g, small, big) -> bool:
    """Does guard term g imply small <= big?"""
    if isinstance(g, ir.Const):
        return g.value == 0          # a guard that never holds implies anything
    if isinstance(g, ir.Select):     # `c ? x : y`, as a short-circuit `&&` joins (SPIR-V's OpPhi)
        return (_implies_at_most(g.cond, small, big) or _implies_at_most(g.a, small, big)) \
            and _implies_at_most(g.b, small, big)
    if not isinstance(g, ir.BinOp):
        return False
    if g.op == "&&":
        return _implies_at_most(g.a, small, big) or _implies_at_most(g.b, small, big)
    if g.op in ("<=", "<"):
        return g.a is small and g.b is big
    if g.op in (">=", ">"):
        return g.a is big and g.b is small
    return False


def breaks_non_uniformly(body, st) -> bool:
    # Divergent exits are recorded by the If handling in `st.divergent`; a loop whose body made it
    # divergent via a break or continue has a thread-dependent trip count.
    return bool(st.divergent) and has_exit(body)


def step_key(s):
    """What a statement stores to, when it may step loop state: a variable's name, or a
    private array's name (a store at a constant offset), else None."""
    if isinstance(s, ir.Assign):
        return s.target
    if isinstance(s, ir.MemOp) and s.access.space == ir.PRIVATE and s.access.is_write:
        return ("array", s.access.buffer)
    return None


def this_loop(stmts):
    """The statements of a loop body that belong to this loop (not to a loop inside it)."""
    return ir.walk_stmts(stmts, into_loops=False)


def ended_facts(s: ir.Loop, first, inductions: dict, inner: tuple, intern) -> tuple:
    """Facts true of a thread that got past loop `s` (entered when `first`, its condition in
    iteration 0, held), for a loop whose condition is its only way out (no break, continue or
    return), so that a thread leaves it only when the condition fails:

    - `v < B` (or `<=`, `>`, `>=`, `!=`) with `v` stepped by a loop-invariant amount (an
      induction, `v = init + i * step`) and a bound `B` nothing in the loop changes: the loop
      was not entered, or the step moves `v` toward `B` (`step > 0` for `<`; nonzero for `!=`).
      Otherwise the condition holds in every iteration (integers are mathematical, as in the
      whole encoding: `init + i * step` is `v` in iteration `i`) and the thread never leaves.
    - the facts of loops its body got past (`inner`), in iteration 0: true of a thread that ran
      that iteration to its end, as every thread that entered the loop and left it did.

    Each is implied by the thread reaching what follows the loop, so adding them to the queries
    of the accesses there removes only models in which a thread never gets to its access (models
    whose witnesses do not replay: the replay loops until its step limit), never a real collision.
    """
    if any(isinstance(x, (ir.Break, ir.Continue)) for x in this_loop(s.body)) or has_return(s.body):
        return ()
    out = [intern(ir.BinOp("||", negate(first), at_first_iteration(intern, g, s.id, {}))) for g in inner]
    counter = loop_counter(s.cond)
    if counter is not None:
        op, v, bound = counter
        closed = inductions.get(v.name)
        assigned = assigned_names(s.body) | assigned_names(s.update)
        # The step as the program spells it: `_inductions` takes its value once, on entry.
        stepped = [x.value.b for x in ir.walk_stmts(s.body + s.update, updates=True)
                   if isinstance(x, ir.Assign) and x.target == v.name and isinstance(x.value, ir.BinOp)]
        if (isinstance(closed, ir.BinOp) and closed.op in ("+", "-") and len(stepped) == 1
                and _invariant(stepped[0], assigned) and _invariant(bound, assigned)):
            step = closed.b.b       # closed = init +/- Iter * step (`_inductions`)
        else:
            step = None
        # A constant step's direction is the program's, not the model's to choose; and it is the
        # one way a loop relies on wrap-around (`i--` over an unsigned `i < n`): left alone.
        if step is not None and not isinstance(step, ir.Const):
            sign = step_sign(op, closed.op == "+")
            out.append(intern(ir.BinOp("||", negate(first), intern(ir.BinOp(sign, step, intern(ir.Const(0)))))))
    return tuple(out)


# The direction a counter must move for `v OP bound` to become false: the sign of its step.
_TOWARD = {"<": ">", "<=": ">", ">": "<", ">=": "<", "!=": "!="}
# `bound OP v` as `v OP' bound`.
_MIRROR = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "!=": "!="}


def loop_counter(cond) -> tuple[str, ir.Var, object] | None:
    """(OP, v, bound) for a loop condition `v OP bound` or `bound OP v` (OP a comparison a step
    can end: `<`, `<=`, `>`, `>=`, `!=`), v a variable; None for any other condition."""
    if not isinstance(cond, ir.BinOp) or cond.op not in _TOWARD:
        return None
    op, v, bound = (cond.op, cond.a, cond.b) if isinstance(cond.a, ir.Var) else (_MIRROR[cond.op], cond.b, cond.a)
    return (op, v, bound) if isinstance(v, ir.Var) else None


def step_sign(op: str, added: bool) -> str:
    """The comparison with 0 (`>`, `<` or `!=`) a step must satisfy for `v OP bound` to end, the
    step added to v (`v += s`) or, with `added` false, subtracted (`v -= s`)."""
    toward = _TOWARD[op]
    return toward if added else {">": "<", "<": ">", "!=": "!="}[toward]


def _invariant(e, assigned: set[str]) -> bool:
    """`e` has one value in every iteration of a loop assigning `assigned`: constants, parameters,
    builtins and variables the loop does not assign (no memory read, no call)."""
    if isinstance(e, ir.Const | ir.Param | ir.Builtin):
        return True
    if isinstance(e, ir.Var):
        return e.name not in assigned
    if isinstance(e, ir.BinOp):
        return _invariant(e.a, assigned) and _invariant(e.b, assigned)
    if isinstance(e, ir.UnOp):
        return _invariant(e.a, assigned)
    return False


def has_exit(stmts) -> bool:
    for s in stmts:
        if isinstance(s, (ir.Break, ir.Return)):
            return True
        if isinstance(s, ir.If) and (has_exit(s.then) or has_exit(s.orelse)):
            return True
    return False


def has_return(stmts) -> bool:
    return any(isinstance(s, ir.Return) for s in ir.walk_stmts(stmts))


@ir.per_node(4096)    # each pass of a loop asks for its body, and so for every loop inside
def assigned_names(stmts) -> frozenset[str]:
    out: set[str] = set()
    for s in stmts:
        if isinstance(s, ir.Assign):
            out.add(s.target)
        elif isinstance(s, ir.If):
            out |= assigned_names(s.then) | assigned_names(s.orelse)
        elif isinstance(s, ir.Loop):
            out |= assigned_names(s.body) | assigned_names(s.update)
    return frozenset(out)


@ir.per_node(4096)
def assigned_cells(stmts) -> frozenset[str]:
    out: set[str] = set()
    for s in stmts:
        if isinstance(s, ir.MemOp) and s.access.space == ir.PRIVATE:
            out.add(s.access.buffer)
        elif isinstance(s, ir.If):
            out |= assigned_cells(s.then) | assigned_cells(s.orelse)
        elif isinstance(s, ir.Loop):
            out |= assigned_cells(s.body) | assigned_cells(s.update)
    return frozenset(out)


def closed_form(op: str, init, step, it):
    """The value after `it` steps of `x op= step` from `init`, or None where it has no closed form."""
    if op in ("/", "*"):
        k = power_bits.log2(step.value) if isinstance(step, ir.Const) else None
        if k is None:
            return None     # other factors and divisors have no closed form
        if op == "/":
            # `s /= 2^k` (a reduction's or a bitonic sort's halving stride): C's division
            # truncates, and truncations compose, so n steps divide by 2^(k*n) at once.
            return ir.BinOp("/", init, ir.BinOp("<<", ir.Const(1), ir.BinOp("*", it, ir.Const(k))))
        # `s *= 2^k` (the CUDA samples' reductions and scans) is `s <<= k`: the same value in
        # modular and in unbounded arithmetic.
        op, step = "<<", ir.Const(k)
    if op == "-" and isinstance(step, ir.Const):
        op, step = "+", ir.Const(-step.value)   # x - (-2) grows: its floor shows
    # Shifts compose as one shift by the sum (arithmetically, without wrap-around).
    return ir.BinOp(op, init, ir.BinOp("*", it, step))


def mentions(e, names: set[str]) -> bool:
    """Whether e may change between iterations: it reads one of `names`, or memory."""
    if isinstance(e, ir.Var):
        return e.name in names
    if isinstance(e, ir.Read | ir.Opaque):
        return True
    return any(mentions(x, names) for x in ir.operands(e))


def join_states(cond, a: dict, b: dict, unset=None) -> dict:
    """The state after a branch on `cond` whose sides left `a` and `b`. A name one side left unset
    is dropped (read after, it is undefined), or with `unset` (name -> its undefined value) kept as
    a select of the other side's value: an early return's result assigned under one condition and
    then under its negation is one value, not an undefined one."""
    out = {}
    if unset is not None:
        keys = list(a) + [k for k in b if k not in a]
        a = {k: a[k] if k in a else unset(k) for k in keys}
        b = {k: b[k] if k in b else unset(k) for k in keys}
    for k in a:     # in a's order: a set of the keys would follow string hashing (PYTHONHASHSEED)
        if k not in b:
            continue
        va, vb = a[k], b[k]
        # Identity, not structural equality: comparing deep terms would cost more than a select.
        out[k] = va if va is vb else division_forms.select(cond, va, vb)
    return out


def bound_terms(executor, acc: ir.Access, st) -> tuple:
    """An access's subscripts (ir.Access.bounds) evaluated, but those that read memory (evaluating
    one again would record its read again)."""
    return tuple((executor.term(i, st), n) for i, n in acc.bounds if not _reads(i))


def _reads(e) -> bool:
    """Whether an IR expression reads memory."""
    return isinstance(e, ir.Read) or any(_reads(x) for x in ir.operands(e))

