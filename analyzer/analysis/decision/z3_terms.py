"""Z3 terms as the encoder builds them: integers, and conditions read as integers or as truths
(C's `if (x)`), C's truncating division, and 64-bit vectors of integers. Shared by solver.py and
division_encoding.py."""

from __future__ import annotations

import z3


def num(n: int):
    return z3.IntVal(n)


def truth(e):
    return e if z3.is_bool(e) else e != 0


def as_int(e):
    return z3.If(e, num(1), num(0)) if z3.is_bool(e) else e


def const_value(e) -> int | None:
    # The class, not z3.is_int_value: the same answer for terms built here, at a tenth of the cost.
    return e.as_long() if isinstance(e, z3.IntNumRef) else None


def trunc_div(a, b):
    """C division: truncates toward zero (SMT-LIB `div` is Euclidean)."""
    q = a / b
    return z3.If(z3.Or(a >= 0, a % b == 0), q, z3.If(b > 0, q + 1, q - 1))


def to_bits(e):
    # 64 bits: wide enough for int64_t indices, and exact for int values
    return z3.Int2BV(e, 64)


def from_bits(e):
    # signed reading of a 64-bit vector
    u = z3.BV2Int(e, is_signed=False)
    return z3.If(u >= 1 << 63, u - (1 << 64), u)
