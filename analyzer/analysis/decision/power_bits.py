"""Powers of two whose exponent follows the run, and bitwise operations with them, as integer
arithmetic on the exponent instead of nested shifts and bit-vectors.

A bitonic sort's `stride` is `((2 << size_iter) / 2) >> stride_iter`, its partner `tid ^ stride`,
its direction `tid & size`. Encoded operation by operation, every shift is one case per amount
(solver.py's `_shift`) of a term that is itself cases, each divided again, and the xor goes through
64-bit vectors: every query of such a kernel ran to its budget. Read as `2**e` with the exponent
`e = size_iter + 1 - 1 - stride_iter` (linear), the power is one case per exponent, and with
`p = 2**e` and `bit = (x >> e) mod 2` (bit e of x: floor division, the two's complement bit of any
integer)

    x ^ p = x - p if bit else x + p
    x & p = p     if bit else 0
    x | p = x     if bit else x + p

Which terms are powers of two is read off the IR: a constant power of two, shifted left or
multiplied by powers of two (the exponents add), then shifted right or divided by powers of two
(they subtract; a power of two shifted past its last bit is 0, where `e < 0`). The values
are mathematical integers, as everywhere in the analysis (replay.py and the interpreter compute
the same); they agree with 64-bit two's complement for exponents up to 62. A larger one needs a
shift C leaves undefined or an overflow, and gets a value of its own (solver.py, `_pow2_of`).

Bit fields apart (`disjoint_fields`): where one operand's low w bits are zero (`x & ~31`,
`warp << 5`, `row * 64`) and the other is below 2**w (`lane`, `t & 31`, a thread index the launch
bounds), no bit is in both: `x | y` and `x ^ y` are `x + y` and `x & y` is 0, for every value of
x, negative ones too (its low bits are zero in two's complement as well).
"""

from __future__ import annotations

import z3

from analyzer import ir

# The operators whose terms may be powers of two, or operations with one.
OPS = frozenset(("<<", ">>", "/", "fdiv", "*", "^", "&", "|", "%"))


def exponent(t) -> ir.Expr | None:
    """An IR term `e` with `t == (2**e if e >= 0 else 0)`, or None when `t` is not of that form."""
    out = _left(t)
    if out is not None or not isinstance(t, ir.BinOp):
        return out
    if t.op == ">>":
        e = exponent(t.a)
        return ir.BinOp("-", e, t.b) if e is not None else None
    if t.op in ("/", "fdiv"):
        e, f = exponent(t.a), _left(t.b)     # a divisor that is never 0: a quotient of powers
        return ir.BinOp("-", e, f) if e is not None and f is not None else None
    return None


def mask_exponent(t) -> ir.Expr | None:
    """`e` for a mask of the low bits `2**e - 1` (a FFT's `t & (half - 1)`), or None."""
    if isinstance(t, ir.BinOp) and t.op == "-" and isinstance(t.b, ir.Const) and t.b.value == 1:
        return exponent(t.a)
    return None


def _left(t) -> ir.Expr | None:
    """The exponent of a power of two built without a right shift (never 0): `2**c`, `p << s`,
    `p * q`."""
    if isinstance(t, ir.Const):
        k = log2(t.value)
        return ir.Const(k) if k is not None else None
    if isinstance(t, ir.BinOp) and t.op == "<<":
        e = _left(t.a)
        return ir.BinOp("+", e, t.b) if e is not None else None
    if isinstance(t, ir.BinOp) and t.op == "*":
        e, f = _left(t.a), _left(t.b)
        return ir.BinOp("+", e, f) if e is not None and f is not None else None
    return None


def log2(n) -> int | None:
    """k where n == 2**k, else None."""
    return n.bit_length() - 1 if isinstance(n, int) and n > 0 and n & (n - 1) == 0 else None


def is_mask(c: int) -> bool:
    """Is `x & c` a remainder: c keeps the low bits (2**k - 1) or clears them (-2**k)?"""
    return (c >= 0 and log2(c + 1) is not None) or (c < 0 and log2(-c) is not None)


# A constant with more runs of ones than this keeps 64-bit vectors (`with_runs`).
MAX_RUNS = 4


def runs(c: int) -> list[tuple[int, int]]:
    """The runs of one bits of c >= 0, as (lowest bit, one past the highest)."""
    out, i = [], 0
    while c >> i:
        if (c >> i) & 1:
            j = i
            while (c >> j) & 1:
                j += 1
            out.append((i, j))
            i = j
        else:
            i += 1
    return out


def with_runs(op: str, x, c: int):
    """`x op c` for op in `^ & |` and a constant c of at most MAX_RUNS runs of ones (of ~c, for
    c < 0), for every integer x, in linear terms: the bits i..j-1 of x are
    `x mod 2**j - x mod 2**i` (Euclidean remainders: two's complement bits of negative x too), so

        x & c = sum over c's runs of those     (c >= 0; for c < 0, x - (x & ~c))
        x | c = x + c - (x & c)                x ^ c = x + c - 2 (x & c)

    A mask is one run from bit 0: `x & (2**k - 1)` is `x mod 2**k` and `x & -2**k` is
    `x - x mod 2**k`, the remainders TVM's indices rely on. Elsewhere this stands where 64-bit
    vectors stood (`(p * threadIdx.y) & 14`: a query of a value stored took its whole budget
    there). None when c has more runs."""
    spans = runs(c if c >= 0 else ~c)
    if len(spans) > MAX_RUNS:
        return None
    parts = [x % (1 << j) - x % (1 << i) if i else x % (1 << j) for i, j in spans]
    kept = (parts[0] if len(parts) == 1 else z3.Sum(parts)) if parts else z3.IntVal(0)
    both = kept if c >= 0 else x - kept
    return both if op == "&" else x + c - both if op == "|" else x + c - 2 * both


def constant(t) -> bool:
    """Is the IR term built of constants alone? (A power of two with a constant exponent keeps
    the encoding of its operations: products and floors by constants.)"""
    return isinstance(t, ir.Const) or (isinstance(t, ir.BinOp) and constant(t.a) and constant(t.b))


def width(t, kernel: ir.Kernel) -> int | None:
    """Bits enough for every value of `t` (all of them non-negative), or None: read off thread and
    block indices and extents where the launch gives them, the lane, non-negative constants, and
    sums, products, masks, and shifts and quotients by constants of those."""
    if isinstance(t, ir.Const):
        return max(t.value.bit_length(), 1) if t.value >= 0 else None
    if isinstance(t, ir.Builtin):
        if t.name.startswith("bdim."):      # the extent itself
            n = kernel.block_dim.get(t.name[5:])
            return max(n.bit_length(), 1) if isinstance(n, int) and n >= 1 else None
        n = (kernel.block_dim.get(t.name[4:]) if t.name.startswith("tid.") else
             kernel.grid_dim.get(t.name[4:]) if t.name.startswith("bid.") else
             kernel.warp_size if t.name == "lane" else None)
        return max((n - 1).bit_length(), 1) if isinstance(n, int) and n >= 1 else None
    if not isinstance(t, ir.BinOp):
        return None
    c = t.b.value if isinstance(t.b, ir.Const) else None
    if t.op == "&" and c is not None and c >= 0:
        return max(c.bit_length(), 1)      # whatever the other operand
    a = width(t.a, kernel)
    if a is None:
        return None
    if t.op in ("+", "|", "^"):
        b = width(t.b, kernel)
        return None if b is None else max(a, b) + (t.op == "+")
    if t.op in ("&", "*"):
        b = width(t.b, kernel)
        return None if b is None else min(a, b) if t.op == "&" else a + b
    if c is None or c < 0:
        return None
    if t.op == "<<" and c < 64:
        return a + c
    if t.op == ">>":
        return max(a - c, 1)
    if t.op in ("/", "fdiv") and c > 0:
        return max(a - (c.bit_length() - 1), 1)     # x / c < 2**a / 2**floor(log2 c)
    if t.op in ("%", "fmod") and c > 0:
        return min(a, max((c - 1).bit_length(), 1))
    return None


def low_zeros(t, memo: dict | None = None) -> int:
    """Low bits that are zero in every value of `t` (a lower bound, up to 64): a constant's, then
    through masks, products, shifts by constants, sums and differences (no carry reaches them)."""
    memo = {} if memo is None else memo
    hit = memo.get(id(t))
    if hit is not None:
        return hit[1]
    out = 0
    c = _int_constant(t)
    if c is not None:
        out = 64 if c == 0 else min((c & -c).bit_length() - 1, 64)
    elif isinstance(t, ir.BinOp):
        if t.op == "<<":
            c = t.b.value if isinstance(t.b, ir.Const) else None
            out = min(low_zeros(t.a, memo) + c, 64) if isinstance(c, int) and 0 <= c < 64 else 0
        elif t.op in ("&", "*", "+", "-", "|", "^"):
            a, b = low_zeros(t.a, memo), low_zeros(t.b, memo)
            out = max(a, b) if t.op == "&" else min(a + b, 64) if t.op == "*" else min(a, b)
    elif isinstance(t, ir.UnOp) and t.op == "-":
        out = low_zeros(t.a, memo)
    elif isinstance(t, ir.Select):
        out = min(low_zeros(t.a, memo), low_zeros(t.b, memo))
    memo[id(t)] = (t, out)
    return out


def _int_constant(t) -> int | None:
    """An integer constant's value, `~c` and `-c` included (how `~31` reaches the IR)."""
    if isinstance(t, ir.UnOp) and t.op in ("~", "-"):
        c = _int_constant(t.a)
        return None if c is None else ~c if t.op == "~" else -c
    if isinstance(t, ir.Const) and isinstance(t.value, int) and not isinstance(t.value, bool):
        return t.value
    return None


def disjoint_fields(t, kernel: ir.Kernel) -> tuple | None:
    """(x, y) when `t` is `x | y`, `x ^ y` or `x & y` (either order) with y's bits all below x's
    zero low bits: y's width (every value non-negative, under 2**w) at most x's low zeros. Then
    no bit is in both, and `|` and `^` are `x + y`, `&` is 0, exactly."""
    if not isinstance(t, ir.BinOp) or t.op not in ("|", "^", "&"):
        return None
    for x, y in ((t.a, t.b), (t.b, t.a)):
        w = width(y, kernel)
        if w is not None and low_zeros(x) >= w:
            return x, y
    return None


def bit_intrinsic(fn: str, bits: list):
    """CUDA's `__popc`/`__brev` (ir.BIT_INTRINSICS) of an operand given as its bits (0/1 terms, the
    lowest first): their sum (the count), or each moved to its mirror position (the reversal). Exact
    and linear, where an uninterpreted function knew neither that two different indices reverse to
    different slots nor anything of a count."""
    what, n = ir.BIT_INTRINSICS[fn]
    bits = bits[:n]
    if what == "count":
        return z3.Sum(bits) if bits else z3.IntVal(0)
    return z3.Sum([b * (1 << (n - 1 - i)) for i, b in enumerate(bits)]) if bits else z3.IntVal(0)


def from_bits(bits: list):
    """The integer whose bits are `bits` (0/1 terms, the lowest first)."""
    return z3.Sum([b * (1 << i) for i, b in enumerate(bits)]) if bits else z3.IntVal(0)


def with_constant(op: str, bits: list, c: int):
    """`x op c` for op in `^ & |`, x given as its n bits (0/1 terms, the lowest first): below n each
    of x's bits is kept, flipped, cleared or set by c's; above, c's own bits stand (x has none)."""
    fixed, terms = 0, []    # the bits c sets, and x's bits kept or flipped
    for i, b in enumerate(bits):
        v = {"^": (b, 1 - b), "&": (0, b), "|": (b, 1)}[op][(c >> i) & 1]
        if isinstance(v, int):
            fixed += v << i
        else:
            terms.append(v * (1 << i))
    if op != "&":
        fixed += (c >> len(bits)) << len(bits)
    return z3.Sum(terms + [z3.IntVal(fixed)])


def by_exponent(e, case, top: int, beyond):
    """`case(k)` where e == k, for k from 0 below `top`; `beyond` for every other e."""
    out = beyond
    for k in range(top - 1, -1, -1):
        out = z3.If(e == k, case(k), out)
    return out


def with_power(op: str, x, e, pow2, shift, bits: list | None = None):
    """`x op 2**e` (`x op 0` where e < 0) for op in `^ & |`, in Z3 terms. `pow2(e)` and
    `shift(">>", x, e)` are the encoder's; `bits`: x's bits when known (the encoder's `_bits`: one
    case per bit, and past them bit e is 0, instead of one case per amount)."""
    if z3.is_int_value(e):
        k = e.as_long()
        if k < 0:
            return x if op in ("^", "|") else z3.IntVal(0)
        p = z3.IntVal(1 << k)
        bit = (x / p) % 2 == 1
    else:
        p = pow2(e)
        if bits is not None:
            bit = by_exponent(e, lambda k: bits[k] == 1, len(bits), z3.BoolVal(False))
        else:
            bit = shift(">>", x, e) % 2 == 1
    if op == "^":
        return z3.If(bit, x - p, x + p)
    if op == "&":
        return z3.If(bit, p, z3.IntVal(0))
    return z3.If(bit, x, x + p)
