"""Z3 terms as the encoder builds them: integers, and conditions read as integers or as truths
(C's `if (x)`). Shared by solver.py and division_encoding.py."""

from __future__ import annotations

import z3


def num(n: int):
    return z3.IntVal(n)


def truth(e):
    return e if z3.is_bool(e) else e != 0


def as_int(e):
    return z3.If(e, num(1), num(0)) if z3.is_bool(e) else e
