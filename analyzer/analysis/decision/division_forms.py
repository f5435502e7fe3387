"""TVM's spellings of integer division, read back as the operations they spell.

TVM prints TIR's floor division and modulo as C's truncating `/` and `%` with sign fix-ups, and its
GLSL path (Vulkan) spells `n % d` out as `n - (n / d) * d` and a `||` as `!a ? b : a`. The
symbolic executor folds each spelling into the one operation it spells as it builds a term
(`select`, `binop`), so the solver sees one floor division where the source has a nest of selects
over truncating ones: at head dims that are not powers of two (80, 96), TVM's page kernels index
with such nests, and a query over them ran out of its budget. Each rule is an identity of integers
under C's semantics, whatever the values.
"""

from __future__ import annotations

from analyzer import ir

_ZERO = ir.Const(0)
_BOOLEAN = ("==", "!=", "<", "<=", ">", ">=", "&&", "||")


def _is(t, op: str, a=None, b=None) -> bool:
    return (isinstance(t, ir.BinOp) and t.op == op and (a is None or t.a == a)
            and (b is None or t.b == b))


def _boolean(t) -> bool:
    """A term whose value is 0 or 1: a comparison or a logical operation."""
    return (isinstance(t, ir.BinOp) and t.op in _BOOLEAN) or (isinstance(t, ir.UnOp) and t.op == "!")


def select(cond, a, b):
    """`cond ? a : b`, or the operation it spells:

    - `!x ? y : x` with x, y truth values is `x || y` (GLSL's spelling);
    - `((d >= 0 && r >= 0) || (d < 0 && r <= 0)) ? q : q - 1` with q = n / d, r = n % d is
      floor division (`? r : r + d` floor modulo)."""
    if isinstance(cond, ir.UnOp) and cond.op == "!" and _boolean(cond.a) and _boolean(a) and b == cond.a:
        return ir.BinOp("||", cond.a, a)
    if not (_is(cond, "||") and _is(cond.a, "&&") and _is(cond.b, "&&")):
        return ir.Select(cond, a, b)
    pos, neg = cond.a, cond.b
    if not (_is(pos.a, ">=", b=_ZERO) and _is(pos.b, ">=", b=_ZERO) and _is(neg.a, "<", b=_ZERO)
            and _is(neg.b, "<=", b=_ZERO)):
        return ir.Select(cond, a, b)
    d, r = pos.a.a, pos.b.a
    if not (_is(r, "%", b=d) and neg.a.a == d and neg.b.a == r):
        return ir.Select(cond, a, b)
    n = r.a
    if _is(a, "/", n, d) and _is(b, "-", a, ir.Const(1)):
        return ir.BinOp("fdiv", n, d)
    if a == r and _is(b, "+", r, d):
        return ir.BinOp("fmod", n, d)
    return ir.Select(cond, a, b)


def binop(op: str, a, b):
    """`a op b`, or the operation it spells:

    - `n - (n / d) * d` is `n % d` (C's remainder, by definition; GLSL's spelling);
    - `n / c + ((n % c) >> s)` with a constant 0 < c <= 2**s is floor division by c: the
      remainder lies strictly between -c and c, so the shift is -1 exactly when it is negative
      (TVM's spelling of `floordiv` by a constant)."""
    if op == "-" and isinstance(b, ir.BinOp) and b.op == "*":
        for q, d in ((b.a, b.b), (b.b, b.a)):
            if _is(q, "/", a, d):
                return ir.BinOp("%", a, d)
    if op == "+":
        for q, s in ((a, b), (b, a)):
            if (_is(q, "/") and isinstance(q.b, ir.Const) and q.b.value > 0 and _is(s, ">>")
                    and isinstance(s.b, ir.Const) and 0 <= s.b.value < 64 and q.b.value <= 1 << s.b.value
                    and _is(s.a, "%", q.a, q.b)):
                return ir.BinOp("fdiv", q.a, q.b)
    return ir.BinOp(op, a, b)
