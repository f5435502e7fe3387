"""Address algebra: turn the overlap of two flattened indices into linear component equalities.

TVM flattens `B[i, j, k]` of a buffer shaped `(N, H, D)` into `(i*H + j)*D + k`, with `H` and `D`
kernel parameters. Asking a solver whether two such products collide is nonlinear and slow. Under
the stated assumption that every access stays inside the dimensions of a *declared* shape (TVM's
buffers; `0 <= k` and `k + width <= D`), `(r1*D + k1)` and `(r2*D + k2)` overlap exactly when
`r1 == r2` and the `k` ranges overlap, which is linear; applied recursively this peels one
dimension at a time. A raw pointer declares nothing: its products stay products.
"""

from __future__ import annotations

import math

from analyzer import ir


def contains_param(t, p: str) -> bool:
    if isinstance(t, ir.Param):
        return t.name == p
    return any(contains_param(x, p) for x in ir.operands(t))


_ZERO = ir.Const(0)
_ONE = ir.Const(1)


def _add(op: str, a, b):
    if is_zero(b):
        return a
    if is_zero(a) and op == "+":
        return b
    return ir.BinOp(op, a, b)


def _mul(a, b):
    if is_zero(a) or is_zero(b):
        return _ZERO
    if a == _ONE:
        return b
    if b == _ONE:
        return a
    return ir.BinOp("*", a, b)


def split(t, p: str):
    """(R, C) with t == R*p + C and neither mentioning p; None when t is not of that shape."""
    if isinstance(t, ir.Param) and t.name == p:
        return _ONE, _ZERO
    if isinstance(t, ir.BinOp) and t.op in ("+", "-"):
        a, b = split(t.a, p), split(t.b, p)
        if a is None or b is None:
            return None
        return _add(t.op, a[0], b[0]), _add(t.op, a[1], b[1])
    if isinstance(t, ir.BinOp) and t.op == "*":
        # x * p is a row x of stride p, whatever x mentions (a quotient by p, say).
        if isinstance(t.b, ir.Param) and t.b.name == p:
            return t.a, _ZERO
        if isinstance(t.a, ir.Param) and t.a.name == p:
            return t.b, _ZERO
        ca, cb = contains_param(t.a, p), contains_param(t.b, p)
        if ca and cb:
            return None
        if ca:
            s = split(t.a, p)
            return None if s is None else (_mul(s[0], t.b), _mul(s[1], t.b))
        if cb:
            s = split(t.b, p)
            return None if s is None else (_mul(t.a, s[0]), _mul(t.a, s[1]))
        return _ZERO, t
    # Any other node (a select, a quotient or remainder by p, ...) stays whole in the column part:
    # t == 0*p + t holds whatever it mentions.
    return _ZERO, t


def params_multiplied(t, out: set[str]) -> set[str]:
    """Parameters that occur as a factor of a product inside t."""
    if isinstance(t, ir.BinOp):
        if t.op == "*":
            for side in (t.a, t.b):
                if isinstance(side, ir.Param):
                    out.add(side.name)
        params_multiplied(t.a, out)
        params_multiplied(t.b, out)
    elif isinstance(t, ir.UnOp):
        params_multiplied(t.a, out)
    return out


def is_zero(t) -> bool:
    if isinstance(t, ir.Const):
        return t.value == 0
    if isinstance(t, ir.BinOp) and t.op in ("+", "-"):
        return is_zero(t.a) and is_zero(t.b)
    if isinstance(t, ir.BinOp) and t.op == "*":
        return is_zero(t.a) or is_zero(t.b)
    return False


def peel_scale(t):
    """(scale, index) with t == index*scale for a constant scale (1 when there is none)."""
    if isinstance(t, ir.BinOp) and t.op == "*" and isinstance(t.b, ir.Const) and t.b.value > 0:
        return t.b.value, t.a
    if isinstance(t, ir.BinOp) and t.op == "+":
        sa, ia = peel_scale(t.a)
        sb, ib = peel_scale(t.b)
        if sa == sb:
            return sa, ir.BinOp("+", ia, ib)
        if isinstance(t.a, ir.Const) and t.a.value == 0:
            return sb, ib
        if isinstance(t.b, ir.Const) and t.b.value == 0:
            return sa, ia
    return 1, t


def radix_split(i1, i2, extents: frozenset[str]):
    """A row stride `p*K` (p a kernel parameter among the buffer's declared `extents`, K the rows'
    common constant factor) splitting both indices into (row, column), with parameter-free
    columns; None when there is none. Only a declared extent bounds a column: for a raw pointer,
    `r*D + c` with `c >= D` is as legal as any other offset.
    Returns (stride term, (row1, column1), (row2, column2))."""
    candidates = sorted(params_multiplied(i1, set()) & params_multiplied(i2, set()) & extents)
    for p in candidates:
        s1, s2 = split(i1, p), split(i2, p)
        if s1 is None or s2 is None or is_zero(s1[0]) or is_zero(s2[0]):
            continue
        if params_multiplied(s1[1], set()) or params_multiplied(s2[1], set()):
            continue
        # x*(K*p): the row stride is K*p, not p, and the column may reach it.
        k = math.gcd(_content(s1[0]), _content(s2[0]))
        stride = ir.Param(p) if k == 1 else ir.BinOp("*", ir.Param(p), ir.Const(k))
        return stride, s1, s2
    return None


def _content(t) -> int:
    """The gcd of a term's linear coefficients (0 for a constant term)."""
    g = 0
    for coef in linearize(t).values():
        g = math.gcd(g, abs(coef))
    return g or 1


def linearize(t, out: dict | None = None, k: int = 1) -> dict:
    """t as {atom: coefficient} (key 1 for the constant); non-linear sub-terms are atoms."""
    if out is None:
        out = {}
    if isinstance(t, ir.Const):
        out[1] = out.get(1, 0) + k * t.value
    elif isinstance(t, ir.BinOp) and t.op in ("+", "-"):
        linearize(t.a, out, k)
        linearize(t.b, out, k if t.op == "+" else -k)
    elif isinstance(t, ir.BinOp) and t.op == "*" and isinstance(t.b, ir.Const):
        linearize(t.a, out, k * t.b.value)
    elif isinstance(t, ir.BinOp) and t.op == "*" and isinstance(t.a, ir.Const):
        linearize(t.b, out, k * t.a.value)
    elif isinstance(t, ir.UnOp) and t.op == "-":
        linearize(t.a, out, -k)
    else:
        out[t] = out.get(t, 0) + k
    return out


def _sum(parts):
    out = ir.Const(0)
    for p in parts:
        out = p if isinstance(out, ir.Const) and out.value == 0 else ir.BinOp("+", out, p)
    return out


def _scaled(atom, c: int):
    return ir.Const(c) if atom == 1 else (atom if c == 1 else ir.BinOp("*", atom, ir.Const(c)))


def split_rows(index, stride: int, offset_param: str | None):
    """(row, column) with index == row*stride + column + (the buffer's own offset parameter);
    the column keeps every coefficient below the stride, so in bounds it lies in [0, stride)."""
    rows, cols = [], []
    for atom, coef in linearize(index).items():
        if isinstance(atom, ir.Param) and atom.name == offset_param:
            continue
        q, r = divmod(coef, stride)
        if q:
            rows.append(_scaled(atom, q))
        if r:
            cols.append(_scaled(atom, r))
    return _sum(rows), _sum(cols)


def inner_index(index, stride: int, offset_param: str | None):
    """The part of a flattened index below a row of `stride` elements (the buffer's own offset
    parameter excluded), as a term; in bounds it lies in [0, stride)."""
    parts = []
    for atom, coef in linearize(index).items():
        if isinstance(atom, ir.Param) and atom.name == offset_param:
            continue
        c = coef % stride
        if c == 0:
            continue
        parts.append(ir.Const(c) if atom == 1 else (atom if c == 1 else ir.BinOp("*", atom, ir.Const(c))))
    out = ir.Const(0)
    for p in parts:
        out = p if isinstance(out, ir.Const) and out.value == 0 else ir.BinOp("+", out, p)
    return out
