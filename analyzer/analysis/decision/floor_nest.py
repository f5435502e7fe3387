"""A floor of a floor, by positive constants, as one floor: `(x / d + k) / c == (x + d*k) / (d*c)`.

A truth of integers for every sign of x and k (Z3's `div` by a positive constant floors):
floor(x/d) + k == floor((x + d*k)/d), and floor(floor(y/d)/c) == floor(y/(d*c)) for d, c > 0.

TVM's MLA prefill kernel (DeepSeek-V2-Lite, 16 query heads in one tile of rows) takes a tile's
flat index apart as `(((tile*8 + i) >> 2) + (y >> 1)) >> 2` for the row and `(...) & 15` for the
head. Left nested, the solver must find that the two quotients by 4 are the one quotient by 16
whose remainder is the head: the grid query's refinement by q_indptr's order ran past its budget
(9.9M steps, budget 9M). As one floor, the row meets the head's `% 16` of the same dividend and
the refinement is decided in about 0.35M (cuda, metal; vulkan's spelling 1.6M).

Used for C's `>>` by a constant (solver.py `binop`), an arithmetic shift: a floor for every sign.
Kept apart from the encoder's division forms (solver.py `_by_constant`, division_forms.py): it
rewrites only Z3 terms that are floors already, so the value is the same whatever produced them.
"""

from __future__ import annotations

import z3


def _floor_by(e) -> tuple | None:
    """(x, d) when `e` is Z3's `div(x, d)` with d a positive numeral; None otherwise."""
    if z3.is_app_of(e, z3.Z3_OP_IDIV) and z3.is_int_value(e.arg(1)) and e.arg(1).as_long() > 0:
        return e.arg(0), e.arg(1).as_long()
    return None


def _summands(a) -> list:
    """The terms of a sum, through nested sums (z3py's `+` builds them two at a time)."""
    out, stack = [], [a]
    while stack:
        e = stack.pop()
        if z3.is_add(e):
            stack.extend(reversed(e.children()))
        else:
            out.append(e)
    return out


def one_floor(a, c: int):
    """`a / c` (floor, c > 0), with one floor by a positive constant in `a` (all of `a`, or one
    term of a sum) taken into the outer one. The same value for every integer assignment."""
    inner = _floor_by(a)
    if inner is not None:
        x, d = inner
        return x / (d * c)
    if z3.is_add(a):
        terms = _summands(a)
        for i, t in enumerate(terms):
            inner = _floor_by(t)
            if inner is not None:
                x, d = inner
                rest = terms[:i] + terms[i + 1:]
                return (x + d * z3.Sum(*rest)) / (d * c)
    return a / c
