"""Z3 encoding of two threads of one block executing symbolic terms, with C integer semantics.

Integers are 64-bit bit-vectors with signed, truncating `/` and `%` and arithmetic `>>`, which is
what TVM's index arithmetic means; parameters and extents are bounded well below 2**62 so that no
product of two of them wraps (C makes signed overflow undefined, so no kernel relies on it).
"""

from __future__ import annotations

import z3

from . import ir
from .symbolic import Iter, Sym

W = 64
DIMS = ("x", "y", "z")
ITER_BITS = 24
MAX_BLOCK = 1024          # threads per block on CUDA and Metal
MAX_GRID = (1 << 31) - 1


def _bits(extent, limit: int) -> int:
    n = extent if isinstance(extent, int) else limit
    return max(1, (n - 1).bit_length())


def _narrow(name: str, bits: int):
    return z3.ZeroExt(W - bits, z3.BitVec(name, bits))


def _is_const(e) -> bool:
    return z3.is_bv_value(e)


def bv(n: int):
    return z3.BitVecVal(n, W)


def truth(e):
    return e if z3.is_bool(e) else e != bv(0)


def as_int(e):
    return z3.If(e, bv(1), bv(0)) if z3.is_bool(e) else e


class Encoder:
    """Builds Z3 terms for thread 1 and thread 2 of the same block."""

    def __init__(self, kernel: ir.Kernel, warp_size: int, exact: bool = True):
        self.kernel = kernel
        # Inexact mode reads a product of two non-constants as an uninterpreted function: an
        # over-approximation (unsat stays unsat) that spares the solver 64-bit multipliers.
        self.exact = exact
        self.warp_size = warp_size
        self.base: list = []          # constraints that always hold
        self.shared: dict[str, object] = {}
        self.funcs: dict[tuple[str, int], object] = {}
        self.memo: dict[tuple[int, int], tuple[object, object]] = {}
        # Narrow variables zero- or sign-extended to 64 bits: the high bits are constants, which
        # the bit-blaster propagates, so the 64-bit arithmetic stays cheap.
        bdims = {d: kernel.block_dim.get(d, 1) for d in DIMS}
        self.tid = {k: {d: _narrow(f"t{k}.{d}", _bits(bdims[d], MAX_BLOCK)) for d in DIMS} for k in (1, 2)}
        self.bid = {d: _narrow(f"block.{d}", _bits(kernel.grid_dim.get(d), MAX_GRID)) for d in DIMS}
        self.bdim = {d: self._extent("blockDim", d, bdims[d], MAX_BLOCK) for d in DIMS}
        self.gdim = {d: self._extent("gridDim", d, kernel.grid_dim.get(d), MAX_GRID) for d in DIMS}
        for d in DIMS:
            for k in (1, 2):
                self.base.append(z3.ULT(self.tid[k][d], self.bdim[d]))
            self.base.append(z3.ULT(self.bid[d], self.gdim[d]))
        self.iter_vars: dict[tuple[int, int], object] = {}

    def _extent(self, what: str, d: str, value, limit: int):
        if isinstance(value, int):
            return bv(value)
        v = _narrow(f"{what}.{d}", limit.bit_length())
        self.base += [z3.UGE(v, 1), z3.ULE(v, limit)]
        self.shared[f"{what}.{d}"] = v
        return v

    def param(self, name: str):
        if name in self.kernel.bindings:
            return bv(self.kernel.bindings[name])
        v = self.shared.get(name)
        if v is None:
            v = z3.SignExt(W - 32, z3.BitVec(name, 32))   # a C int
            self.shared[name] = v
        return v

    def iteration(self, k: int, loop: int):
        v = self.iter_vars.get((k, loop))
        if v is None:
            v = _narrow(f"t{k}.iter{loop}", ITER_BITS)
            self.iter_vars[(k, loop)] = v
        return v

    def linear(self, k: int):
        t = self.tid[k]
        return t["x"] + t["y"] * self.bdim["x"] + t["z"] * (self.bdim["x"] * self.bdim["y"])

    def warp(self, k: int):
        return z3.UDiv(self.linear(k), bv(self.warp_size))

    def func(self, name: str, arity: int):
        key = (name, arity)
        f = self.funcs.get(key)
        if f is None:
            f = z3.Function(name, *([z3.BitVecSort(W)] * arity), z3.BitVecSort(W))
            self.funcs[key] = f
        return f

    def term(self, t, k: int):
        """Z3 term for thread k. Memoised by identity (terms are shared DAGs)."""
        hit = self.memo.get((id(t), k))
        if hit is not None and hit[0] is t:
            return hit[1]
        out = self._term(t, k)
        self.memo[(id(t), k)] = (t, out)
        return out

    def _term(self, t, k: int):
        if isinstance(t, ir.Const):
            return bv(t.value)
        if isinstance(t, ir.Param):
            return self.param(t.name)
        if isinstance(t, ir.Builtin):
            return self.builtin(t.name, k)
        if isinstance(t, Iter):
            return self.iteration(k, t.loop)
        if isinstance(t, Sym):
            name = t.name if t.uniform else f"{t.name}@t{k}"
            args = [as_int(self.term(a, k)) for a in t.args]
            if not args:
                v = self.shared.get(name)
                if v is None:
                    v = z3.BitVec(name, W)
                    self.shared[name] = v
                return v
            return self.func(name, len(args))(*args)
        if isinstance(t, ir.BinOp):
            a, b = self.term(t.a, k), self.term(t.b, k)
            if t.op == "*" and not self.exact and not (_is_const(a) or _is_const(b)):
                return self.func("mul", 2)(as_int(a), as_int(b))
            return self.binop(t.op, a, b)
        if isinstance(t, ir.UnOp):
            a = self.term(t.a, k)
            if t.op == "!":
                return z3.Not(truth(a))
            if t.op == "-":
                return -as_int(a)
            if t.op == "~":
                return ~as_int(a)
        if isinstance(t, ir.Select):
            return z3.If(truth(self.term(t.cond, k)), as_int(self.term(t.a, k)), as_int(self.term(t.b, k)))
        if isinstance(t, ir.Call):
            args = [as_int(self.term(a, k)) for a in t.args]
            if t.fn in ("min", "max") and len(args) == 2:
                a, b = args
                return z3.If(a < b, a, b) if t.fn == "min" else z3.If(a < b, b, a)
            if not args:
                v = self.shared.get(t.fn)
                if v is None:
                    v = z3.BitVec(t.fn, W)
                    self.shared[t.fn] = v
                return v
            return self.func(t.fn, len(args))(*args)
        raise TypeError(f"cannot encode {t!r}")

    def builtin(self, name: str, k: int):
        if name.startswith("tid."):
            return self.tid[k][name[4:]]
        if name.startswith("bid."):
            return self.bid[name[4:]]
        if name.startswith("bdim."):
            return self.bdim[name[5:]]
        if name.startswith("gdim."):
            return self.gdim[name[5:]]
        if name == "lane":
            return z3.URem(self.linear(k), bv(self.warp_size))
        if name == "warp":
            return self.warp(k)
        if name == "linear_tid":
            return self.linear(k)
        raise TypeError(f"unknown builtin {name}")

    @staticmethod
    def binop(op: str, a, b):
        if op == "&&":
            return z3.And(truth(a), truth(b))
        if op == "||":
            return z3.Or(truth(a), truth(b))
        a, b = as_int(a), as_int(b)
        if op == "+":
            return a + b
        if op == "-":
            return a - b
        if op == "*":
            return a * b
        if op == "/":
            return a / b          # signed, truncating (bvsdiv)
        if op == "%":
            return z3.SRem(a, b)  # C's remainder takes the dividend's sign
        if op == "<<":
            return a << b
        if op == ">>":
            return a >> b         # arithmetic
        if op == "&":
            return a & b
        if op == "|":
            return a | b
        if op == "^":
            return a ^ b
        if op == "==":
            return a == b
        if op == "!=":
            return a != b
        if op == "<":
            return a < b
        if op == "<=":
            return a <= b
        if op == ">":
            return a > b
        if op == ">=":
            return a >= b
        raise TypeError(f"unknown operator {op}")

    def value_of(self, model, e) -> int:
        v = model.eval(e, model_completion=True)
        n = v.as_long()
        return n - (1 << W) if n >= 1 << (W - 1) else n
