"""The symbolic executor's terms: one object per structurally equal term (`TermTable`), constant
folding, a loop's first iteration, private cells' keys."""

from __future__ import annotations

import dataclasses

from analyzer import ir
from analyzer.analysis.decision import division_forms
from analyzer.analysis.execution.sym import Iter, Sym


def cell_offset(offsets: dict, offset):
    """A private cell's offset as a key: the byte offset, or ("at", n) for the n-th distinct
    symbolic offset term in `offsets` (terms are interned: one term, one key)."""
    if isinstance(offset, ir.Const):
        return offset.value
    hit = offsets.get(id(offset))
    if hit is None:
        hit = offsets[id(offset)] = (offset, ("at", len(offsets)))
    return hit[1]


def negate(t):
    if isinstance(t, ir.UnOp) and t.op == "!":
        return t.a
    return ir.UnOp("!", t)


def at_first_iteration(intern, t, lid: int, memo: dict):
    """The term `t` with loop `lid`'s iteration number 0 (folded where constants meet)."""
    hit = memo.get(id(t))
    if hit is not None:
        return hit
    if isinstance(t, Iter):
        out = intern(ir.Const(0)) if t.loop == lid else t
    elif isinstance(t, ir.BinOp):
        a, b = at_first_iteration(intern, t.a, lid, memo), at_first_iteration(intern, t.b, lid, memo)
        folded = fold_constant(t.op, a.value, b.value) if isinstance(a, ir.Const) and isinstance(b, ir.Const) else None
        out = (t if a is t.a and b is t.b else
               intern(ir.Const(folded)) if folded is not None else intern(ir.BinOp(t.op, a, b)))
    elif isinstance(t, ir.UnOp):
        a = at_first_iteration(intern, t.a, lid, memo)
        out = t if a is t.a else intern(ir.UnOp(t.op, a))
    elif isinstance(t, ir.Select):
        parts = [at_first_iteration(intern, x, lid, memo) for x in (t.cond, t.a, t.b)]
        out = t if all(p is q for p, q in zip(parts, (t.cond, t.a, t.b))) else intern(ir.Select(*parts))
    elif isinstance(t, ir.Call | Sym):
        args = tuple(at_first_iteration(intern, x, lid, memo) for x in t.args)
        out = t if all(p is q for p, q in zip(args, t.args)) else intern(
            dataclasses.replace(t, args=args) if isinstance(t, ir.Call) else
            Sym(t.name, t.uniform, args, t.lower, tuple((r, at_first_iteration(intern, x, lid, memo)) for r, x in t.after)))
    else:
        out = t
    memo[id(t)] = out
    return out



def _intern(table: dict, t):
    """One object per structurally equal term. Its parts are interned first, so their
    identities make the key; the table keeps them alive, so no identity is reused. The
    uniformity memo and the solver encoding are keyed by identity: each shared part is
    then checked and encoded once, however many statements spell it out again."""
    # The commonest classes by exact type first (this runs for every term the executor makes).
    kind = type(t)
    if kind is ir.BinOp:
        return table.setdefault((ir.BinOp, t.op, id(t.a), id(t.b)), t)
    if kind is ir.Const:
        return table.setdefault((ir.Const, t.value), t)
    if isinstance(t, ir.BinOp):
        key: tuple = (ir.BinOp, t.op, id(t.a), id(t.b))
    elif isinstance(t, ir.Const):
        key = (ir.Const, t.value)
    elif isinstance(t, ir.Param | ir.Builtin):
        key = (type(t), t.name)
    elif isinstance(t, Sym):
        key = (Sym, t.name, t.uniform, t.lower, tuple((r, id(x)) for r, x in t.after), *map(id, t.args))
    elif isinstance(t, ir.UnOp):
        key = (ir.UnOp, t.op, id(t.a))
    elif isinstance(t, ir.Select):
        key = (ir.Select, id(t.cond), id(t.a), id(t.b))
    elif isinstance(t, ir.Call):
        key = (ir.Call, t.fn, t.int_arg, *map(id, t.args))
    elif isinstance(t, Iter):
        key = (Iter, t.loop)
    else:
        return t
    return table.setdefault(key, t)


def fold_binop(op: str, a, b):
    if op in ("&&", "||"):
        return ir.BinOp(op, a, b)
    if isinstance(a, ir.Const) and isinstance(b, ir.Const):
        folded = fold_constant(op, a.value, b.value)
        if folded is not None:
            return ir.Const(folded)
    return division_forms.binop(op, a, b)


class TermTable:
    """The executor's terms, one object per structurally equal term (`_intern`), and those it
    asks for again at every pass of a loop, each made once: an interned term comes back as itself
    (found by identity before its key is built), an operation over interned operands is built once
    per operator and operands, loop state is looked up by its key before a Sym is made. Each pass
    then gets back the same objects for the state that did not change, and what is remembered by
    identity (thread dimensions, uniformity, the solver's encoding) is computed once for them."""

    def __init__(self):
        self.interned: dict[tuple, object] = {}
        self._canonical: dict[int, object] = {}   # id -> the interned term
        self._built: dict[tuple, object] = {}     # (op, id a, id b) -> interned term
        self._iters: dict[int, Iter] = {}
        self._threads: dict[frozenset, tuple] = {}

    def intern(self, t):
        hit = self._canonical.get(id(t))
        if hit is t:
            return t
        out = _intern(self.interned, t)
        self._canonical[id(out)] = out
        return out

    def binop(self, op: str, a, b):
        """`a op b` over interned terms, folded and read back (`fold_binop`), interned."""
        key = (op, id(a), id(b))
        hit = self._built.get(key)
        if hit is None:
            hit = self._built[key] = self.intern(fold_binop(op, a, b))
        return hit

    def iter(self, loop: int) -> Iter:
        hit = self._iters.get(loop)
        if hit is None:
            hit = self._iters[loop] = self.intern(Iter(loop))
        return hit

    def threads(self, dims: frozenset) -> tuple:
        """The thread builtins of `dims`, interned, in a fixed order."""
        hit = self._threads.get(dims)
        if hit is None:
            hit = self._threads[dims] = tuple(self.intern(ir.Builtin(d)) for d in sorted(dims))
        return hit

    def state(self, name: str, args: tuple, lower: int | None) -> Sym:
        """Loop state `name` (a uniform Sym of interned `args`), interned."""
        hit = self.interned.get((Sym, name, True, lower, (), *map(id, args)))
        return hit if hit is not None else self.intern(Sym(name, True, args, lower))


def fold_constant(op: str, a: int, b: int) -> int | None:
    try:
        if op == "+":
            return a + b
        if op == "-":
            return a - b
        if op == "*":
            return a * b
        if op == "/" and b:
            q = abs(a) // abs(b)
            return q if (a >= 0) == (b >= 0) else -q
        if op == "%" and b:
            return a - b * fold_constant("/", a, b)  # type: ignore[operator]
        if op == "<<" and 0 <= b < 64:
            return a << b
        if op == ">>" and 0 <= b < 64:
            return a >> b
        if op == "&":
            return a & b
        if op == "|":
            return a | b
        if op == "^":
            return a ^ b
        if op in ("==", "!=", "<", "<=", ">", ">="):
            return int({"==": a == b, "!=": a != b, "<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b}[op])
    except (ValueError, OverflowError):
        return None
    return None
