"""How the encoder reads powers of two whose exponent follows the run, and the operations with
them (power_bits.py says which terms those are and what each identity is): the power itself, `^ &
|` with one, masks of a run-time width, quotients and remainders by one, and a thread index's bits
as 0/1 integers of their own. A mixin of `solver.Encoder`: it uses the encoder's `kernel`, `base`,
`memo`, `_using`, `func`, `term` and `_shift`."""

from __future__ import annotations

import z3

from analyzer import ir
from analyzer.analysis.decision import power_bits
from analyzer.analysis.decision.z3_terms import as_int


class PowerEncoding:
    """Part of `solver.Encoder`: its powers of two (see the module docstring)."""

    def _power(self, t: ir.BinOp, k: int):
        """A power of two whose exponent follows the run (`2 << i`, `size >> j`), or an operation
        with one (power_bits.py): `x ^ p`, `x & p`, `x | p`, the mask `x & (p - 1)`, `x / p` and
        `x % p`. None for any other term."""
        if t.op in ("^", "&", "|"):
            for x, y in ((t.a, t.b), (t.b, t.a)):
                if t.op == "&" and isinstance(y, ir.Const) and power_bits.is_mask(y.value):
                    return None     # a mask by a constant: the remainder `binop` makes of it
                e = power_bits.exponent(y)
                if e is not None:
                    return power_bits.with_power(t.op, as_int(self.term(x, k)), as_int(self.term(e, k)),
                                                 self._pow2_of, self._shift, self._bits(x, k))
                e = power_bits.mask_exponent(y) if t.op == "&" else None
                if e is not None and not power_bits.constant(e):
                    # x & (2**e - 1) is x's Euclidean remainder by 2**e, for every integer x.
                    return self._per_exponent("%", x, e, k)
            for x, y in ((t.a, t.b), (t.b, t.a)):
                bits = self._bits(x, k) if isinstance(y, ir.Const) else None
                if bits is not None:
                    # x's bits, each with the constant's bit (its others as they are): linear,
                    # where the other bitwise operations go through bit-vectors.
                    return power_bits.with_constant(t.op, bits, y.value)
            return None
        e = power_bits.exponent(t)
        if e is not None and not power_bits.constant(e):
            return self._pow2_of(as_int(self.term(e, k)))
        e = power_bits.exponent(t.b) if t.op in ("/", "%") else None
        if e is None or power_bits.constant(e):
            return None     # a constant: `binop`'s products and quotients by constants
        return self._per_exponent(t.op, t.a, e, k, c_division=True)

    def _per_exponent(self, op: str, x, e, k: int, c_division: bool = False):
        """x / 2**e or x % 2**e (Euclid's, or C's with `c_division`), one case per exponent. Of an
        x whose bits are known, the bits from e on or below e (and for a larger e, 0 or x);
        otherwise the operation by each constant, with an uninterpreted value of (x, e) past 62 and,
        where dividing by 2**e = 0 is undefined in C, below 0."""
        ez = as_int(self.term(e, k))
        bits = self._bits(x, k)
        xz = as_int(self.term(x, k))
        below = None if c_division else xz      # the mask 2**e - 1 of e < 0 is -1: all of x
        if bits is not None:
            case = (lambda j: power_bits.from_bits(bits[j:])) if op == "/" else \
                (lambda j: power_bits.from_bits(bits[:j]))
            out = power_bits.by_exponent(ez, case, len(bits), z3.IntVal(0) if op == "/" else xz)
        else:
            if c_division:
                case = lambda j: as_int(self.term(ir.BinOp(op, x, ir.Const(1 << j)), k))  # noqa: E731
            else:
                case = lambda j: xz % (1 << j)  # noqa: E731
            out = power_bits.by_exponent(ez, case, 63, self.func(f"pow2{op}", 2)(xz, ez))
        return z3.If(ez < 0, self.func(f"pow2{op}", 2)(xz, ez) if below is None else below, out)

    def _bits(self, x, k: int) -> list | None:
        """Thread k's value of x as its bits, 0/1 integers of its own with x their weighted sum,
        when power_bits.width knows how many (None otherwise): linear, where the bit tests and
        remainders by powers of two they spare were a division and a remainder each."""
        n = power_bits.width(x, self.kernel)
        if n is None:
            return None
        xz = as_int(self.term(x, k))
        # By the Z3 term: a value both threads share is split once, not into two sets of bits
        # the solver would have to prove equal.
        memo = self.__dict__.setdefault("_bit_memo", {})
        hit = memo.get(xz.get_id())
        if hit is not None:
            if self._using:
                self._using[-1] |= hit[2]
            return hit[1]
        before = len(self.base)
        bits = [z3.Int(f"bit{len(memo)}.{i}") for i in range(n)]
        self.base += [z3.And(b >= 0, b <= 1) for b in bits] + [xz == power_bits.from_bits(bits)]
        deps = self.memo[(id(x), k)][2] | frozenset(range(before, len(self.base)))
        memo[xz.get_id()] = (xz, bits, deps)
        if self._using:
            self._using[-1] |= deps
        return bits

    def _pow2_of(self, e):
        """2**e for an integer term e: 0 below 0, one case per exponent up to 62, and past that
        some value from 2**63 on (`pow2` uninterpreted: the exact power is never an in-bounds
        index, and the shifts that reach it are undefined in C or overflow 64 bits)."""
        past = self.func("pow2", 1)(e)
        return z3.If(e < 0, z3.IntVal(0), z3.If(e <= 62, self._shift("<<", z3.IntVal(1), e),
                                                 z3.If(past > 0, past, 0) + (1 << 63)))
