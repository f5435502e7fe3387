"""Bit-field extraction and insertion as shifts and masks, for every dialect that has them: WGSL's
`extractBits`/`insertBits` and SPIR-V's OpBitFieldUExtract/OpBitFieldSExtract/OpBitFieldInsert
(GLSL's `bitfieldExtract`/`bitfieldInsert`). Left uninterpreted, an index built from them is an
unknown function, and two threads' indices equal only where every argument is: false alarms on
remapped thread indices (bevy's downsample_depth).

The IR's integers do not wrap (the convention of every front end), so each form is written to be
exact on operands in their 32-bit type's range:

- extract: `(e >> o) & (2^c - 1)`, and for a signed result the sign of bit c-1 extended
  (`v - 2^c` where `v >= 2^(c-1)`); 0 when c is 0;
- insert: `e - (e & M) + ((n & (2^c - 1)) << o)` with `M = (2^c - 1) << o`, which clears and sets
  the field without a complement (`~M` has no finite value); with a constant field, the same value
  as the bits above the field, the new bits and the bits below it, each a field of its operand
  (`((e >> (o+c)) << (o+c)) + ((n & (2^c - 1)) << o) + (e & (2^o - 1))`); a signed result whose
  field reaches bit 31 is brought back into the 32-bit range.

WGSL clamps the field (`o = min(offset, 32)`, `c = min(count, 32 - o)`); SPIR-V leaves a field past
bit 31 undefined, so there the value is an unknown one (`undefined`) unless offset + count <= 32.
"""

from __future__ import annotations

from analyzer import ir

WIDTH = 32


def _const(e: ir.Expr) -> int | None:
    return e.value if isinstance(e, ir.Const) else None


def _binop(op: str, a: ir.Expr, b: ir.Expr) -> ir.Expr:
    """A BinOp, folded where both operands are constants (the common case: constant fields)."""
    x, y = _const(a), _const(b)
    if x is not None and y is not None and not (op in ("<<", ">>") and not 0 <= y <= 2 * WIDTH):
        return ir.Const(_FOLD[op](x, y))
    if y == 0 and op in ("+", "-", "<<", ">>"):
        return a
    if y == 0 and op == "&":
        return ir.Const(0)
    # Fields of fields, kept flat (identities of all integers, so exact for signed operands too):
    # (x & m1) & m2 = x & (m1 & m2); (x >> s1) >> s2 = x >> (s1 + s2); and for a mask of low
    # bits m, (x & m) >> s = (x >> s) & (m >> s). The solver then sees one remainder per field.
    if y is not None and isinstance(a, ir.BinOp) and isinstance(a.b, ir.Const):
        inner = a.b.value
        if op == "&" == a.op and y >= 0 and inner >= 0:
            return _binop("&", a.a, ir.Const(inner & y))
        if op == ">>" == a.op and 0 <= y <= 2 * WIDTH and inner >= 0:
            return _binop(">>", a.a, ir.Const(inner + y))
        if op == ">>" and a.op == "&" and 0 <= y <= 2 * WIDTH and inner >= 0 and inner & (inner + 1) == 0:
            return _binop("&", _binop(">>", a.a, b), ir.Const(inner >> y))
    return ir.BinOp(op, a, b)


_FOLD = {"+": lambda x, y: x + y, "-": lambda x, y: x - y, "<<": lambda x, y: x << y, ">>": lambda x, y: x >> y,
         "&": lambda x, y: x & y, "<": lambda x, y: int(x < y), "<=": lambda x, y: int(x <= y),
         ">=": lambda x, y: int(x >= y), "==": lambda x, y: int(x == y)}


def _select(c: ir.Expr, a: ir.Expr, b: ir.Expr) -> ir.Expr:
    k = _const(c)
    if k is not None:
        return a if k else b
    return ir.Select(c, a, b)


def _min(a: ir.Expr, b: ir.Expr) -> ir.Expr:
    return _select(_binop("<", a, b), a, b)


def wgsl_field(offset: ir.Expr, count: ir.Expr) -> tuple[ir.Expr, ir.Expr]:
    """WGSL's clamped field: o = min(offset, 32), c = min(count, 32 - o)."""
    o = _min(offset, ir.Const(WIDTH))
    return o, _min(count, _binop("-", ir.Const(WIDTH), o))


def _mask(c: ir.Expr) -> ir.Expr:
    return _binop("-", _binop("<<", ir.Const(1), c), ir.Const(1))


def extract(e: ir.Expr, o: ir.Expr, c: ir.Expr, signed: bool) -> ir.Expr:
    """Bits o .. o+c-1 of e (a field inside 32 bits), zero- or sign-extended."""
    v = _binop("&", _binop(">>", e, o), _mask(c))
    if not signed:
        return v
    top = _binop("<<", ir.Const(1), _binop("-", c, ir.Const(1)))
    extended = _select(_binop(">=", v, top), _binop("-", v, _binop("<<", ir.Const(1), c)), v)
    return _select(_binop("==", c, ir.Const(0)), ir.Const(0), extended)


def insert(e: ir.Expr, n: ir.Expr, o: ir.Expr, c: ir.Expr, signed: bool) -> ir.Expr:
    """e with bits o .. o+c-1 (a field inside 32 bits) replaced by the low c bits of n."""
    m = _mask(c)
    end = _binop("+", o, c)
    if _const(o) is not None and _const(end) is not None and 0 <= _const(o) <= _const(end) <= WIDTH:
        # A constant field: the bits below it, the new bits, the bits above it, each a field of
        # its operand (flat: see _binop), rather than e minus its old field.
        top = _binop("<<", _binop(">>", e, end), end)
        r = _binop("+", _binop("+", top, _binop("<<", _binop("&", n, m), o)), _binop("&", e, _mask(o)))
    else:
        field = _binop("<<", m, o)
        r = _binop("+", _binop("-", e, _binop("&", e, field)), _binop("<<", _binop("&", n, m), o))
    if not signed or (_const(end) is not None and _const(end) < WIDTH):
        return r
    # A signed result whose field reaches bit 31: back into [-2^31, 2^31).
    half, full = ir.Const(1 << (WIDTH - 1)), ir.Const(1 << WIDTH)
    return _select(_binop(">=", r, half), _binop("-", r, full),
                   _select(_binop("<", r, ir.UnOp("-", half)), _binop("+", r, full), r))


def spirv_defined(value: ir.Expr, o: ir.Expr, c: ir.Expr, undefined: ir.Expr) -> ir.Expr:
    """SPIR-V's field is defined only where offset + count <= 32: elsewhere any value."""
    return _select(_binop("<=", _binop("+", o, c), ir.Const(WIDTH)), value, undefined)
