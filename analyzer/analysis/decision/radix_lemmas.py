"""Mixed-radix lemmas: valid facts of integer arithmetic that make a collision of two flattened
indices with a symbolic row length linear to decide.

`out[gid.y * W + gid.x]` of two threads collides only where `gid.y` and `gid.x` agree, as long as
`0 <= gid.x < W`: a product of two unknowns, which Z3's nonlinear arithmetic takes seconds to see
(or never, with a value comparison beside it), where a hand-written buffer declares no shape
that would let addresses.py split the rows under an in-bounds assumption. The lemma

    0 <= c1, c1 + w1 <= S, 0 <= c2, c2 + w2 <= S, r1*S + c1 and r2*S + c2 overlap (widths w1, w2)
        implies  r1 == r2 and c1, c2 overlap

holds of all integers (rows apart differ by at least S, more than the columns can make up), so
stating it changes no verdict: a model of the query is a model with it. What it adds is the
case split Z3 would need to find: where the guards bound the columns, the rows must be equal,
and the rows and columns are split again in turn (`gid.y = block.y * blockDim.y + t.y`).

The split is made on the Z3 terms themselves (sums and products of the exact encoding), by a
factor both indices share as one term (a parameter, a launch extent, a value every block loads
alike): `x == r*S + c` is then an identity of the ring, whatever the rest of the terms mean.
Products the cheap encoding reads as functions are not products here: it gets no lemma.
"""

from __future__ import annotations

import z3

# Lemmas per pair of indices (each split yields at most two more pairs to split): bounds the
# query's growth whatever the index's shape.
MAX_LEMMAS = 6
# Candidate factors tried per pair of indices.
MAX_FACTORS = 4


def _kids(e) -> list:
    return [e.arg(i) for i in range(e.num_args())]


def _factors(e, out: dict, depth: int = 0) -> dict:
    """The non-numeral factors of the products in the sum `e` (id -> term), outermost first."""
    if depth > 12 or not z3.is_app(e):
        return out
    k = e.decl().kind()
    if k == z3.Z3_OP_MUL:
        for a in _kids(e):
            if not z3.is_int_value(a):
                out.setdefault(a.get_id(), a)
        for a in _kids(e):
            _factors(a, out, depth + 1)
    elif k in (z3.Z3_OP_ADD, z3.Z3_OP_SUB, z3.Z3_OP_UMINUS):
        for a in _kids(e):
            _factors(a, out, depth + 1)
    return out


def _mentions(e, sid: int, depth: int = 0) -> bool:
    if e.get_id() == sid:
        return True
    if depth > 12 or not z3.is_app(e) or e.decl().kind() not in (z3.Z3_OP_MUL, z3.Z3_OP_ADD, z3.Z3_OP_SUB,
                                                                   z3.Z3_OP_UMINUS):
        return False
    return any(_mentions(a, sid, depth + 1) for a in _kids(e))


def split(e, s, depth: int = 0):
    """(r, c) with e == r*s + c an identity of the ring, c free of `s` as a factor of a product
    along e's sums; None where e's sums and products do not allow it (s inside a product of two
    terms that both mention it)."""
    zero = z3.IntVal(0, e.ctx)
    if e.get_id() == s.get_id():
        return z3.IntVal(1, e.ctx), zero
    if depth > 12 or not z3.is_app(e):
        return zero, e
    k = e.decl().kind()
    if k in (z3.Z3_OP_ADD, z3.Z3_OP_SUB):
        parts = [split(a, s, depth + 1) for a in _kids(e)]
        if any(p is None for p in parts):
            return None
        r, c = parts[0]
        for pr, pc in parts[1:]:
            r, c = (r + pr, c + pc) if k == z3.Z3_OP_ADD else (r - pr, c - pc)
        return r, c
    if k == z3.Z3_OP_UMINUS:
        p = split(e.arg(0), s, depth + 1)
        return None if p is None else (-p[0], -p[1])
    if k == z3.Z3_OP_MUL:
        kids = _kids(e)
        sid = s.get_id()
        for i, a in enumerate(kids):
            if a.get_id() == sid:
                rest = kids[:i] + kids[i + 1:]
                return (_product(rest, e.ctx), zero)
        having = [i for i, a in enumerate(kids) if _mentions(a, sid)]
        if not having:
            return zero, e
        if len(having) > 1:
            return None
        i = having[0]
        p = split(kids[i], s, depth + 1)
        if p is None:
            return None
        rest = _product(kids[:i] + kids[i + 1:], e.ctx)
        return p[0] * rest, p[1] * rest
    return zero, e


def _product(terms: list, ctx):
    if not terms:
        return z3.IntVal(1, ctx)
    out = terms[0]
    for t in terms[1:]:
        out = out * t
    return out


def _zero(e) -> bool:
    return z3.is_int_value(e) and e.as_long() == 0


def lemmas(x1, x2, w1: int, w2: int) -> list:
    """Mixed-radix lemmas (see the module docstring) for the overlap of x1 (w1 elements) and x2
    (w2 elements), the rows and columns split again, at most MAX_LEMMAS of them."""
    out: list = []
    todo = [(x1, x2, w1, w2)]
    while todo and len(out) < MAX_LEMMAS:
        a, b, wa, wb = todo.pop(0)
        if a.get_id() == b.get_id():
            continue
        fa, fb = _factors(a, {}), _factors(b, {})
        common = [f for i, f in fa.items() if i in fb][:MAX_FACTORS]
        for s in common:
            pa, pb = split(a, s), split(b, s)
            if pa is None or pb is None or (_zero(pa[0]) and _zero(pb[0])):
                continue
            (ra, ca), (rb, cb) = pa, pb
            premise = z3.And(ca >= 0, ca + wa <= s, cb >= 0, cb + wb <= s, a < b + wb, b < a + wa)
            out.append(z3.Implies(premise, z3.And(ra == rb, ca < cb + wb, cb < ca + wa)))
            todo += [(ra, rb, 1, 1), (ca, cb, wa, wb)]
            break
    return out[:MAX_LEMMAS]
