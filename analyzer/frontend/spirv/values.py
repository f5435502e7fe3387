"""What an SSA id stands for while a kernel is lowered: an IR expression, a pointer (`Ptr`: into a
buffer, to a local variable, a builtin or a parameter block) or a composite (`Vec`), and the
lookups that turn ids into them. Separate because every other part of the lowering reads ids
through it."""

from __future__ import annotations

import struct
from dataclasses import dataclass

from analyzer import ir
from analyzer.frontend.lower import Unsupported
from analyzer.frontend.spirv.module import Ins
from analyzer.frontend.spirv.opcodes import BINOPS, SAME_VALUE, UNOPS


@dataclass
class Ptr:
    kind: str                 # mem (a buffer), local (an IR variable), builtin, param (push constants)
    base: str
    space: str
    offset: ir.Expr
    ty: str                   # pointee type id
    path: tuple = ()          # constant indices taken so far (builtins and parameter blocks)
    bounds: tuple = ()        # indices into arrays and vectors of known length, with it (ir.Access.bounds)


@dataclass
class Vec:
    lanes: tuple


class ValuesMixin:
    """KernelLowering's ids: `values` maps each id lowered so far to what it stands for."""

    def value(self, ident: str, ins: Ins):
        v = self.values.get(ident)
        if v is not None:
            return v
        m = self.m
        if ident in m.spec_ops:
            return self._spec_op(ident, ins)
        if ident in m.constants:
            c = m.constants[ident]
            if ident in m.spec_constants:
                return ir.Param(self._spec_name(ident))
            if c is None:
                return ir.Opaque("undefined value", next(self.opaque_ids))
            if isinstance(c, tuple):
                return Vec(tuple(self.value(p, ins) for p in c))
            if isinstance(c, bool):
                return ir.Const(int(c))
            if isinstance(c, float):
                return ir.Call("fbits", (ir.Const(struct.unpack("<q", struct.pack("<d", c))[0]),))
            return ir.Const(c)
        raise Unsupported(ins.node, f"use of {ident}, which is not defined before its use")

    def _spec_name(self, ident: str) -> str:
        """The scalar parameter a specialization constant is (the host sets it when it creates
        the pipeline; --scalar binds it): its name, `spec_NAME` where a push constant has that name
        (ncnn's `psc(w)` is `w == 0 ? p.w : w`: two values)."""
        m = self.m
        # One value per SpecId: glslang declares `local_size_x_id = 0` and `constant_id = 0` apart.
        key = _spec_id(m, ident) or ident
        name = self.spec_names.get(key)
        if name is None:
            same = [c for c in sorted(m.spec_constants) if (_spec_id(m, c) or c) == key]
            name = next((m.names[c] for c in same if m.names.get(c)), "") or (f"spec{key}" if key != ident else ident[1:])
            taken = set(self.kernel.params) | set(self.spec_names.values())
            while name in taken:
                name = f"spec_{name}"
            self.spec_names[key] = name
            self.kernel.params.append(name)
        return name

    def _spec_op(self, ident: str, ins: Ins):
        """An OpSpecConstantOp: its operation over the constants it names, as an expression."""
        opcode, args = self.m.spec_ops[ident]
        op = "Op" + opcode
        vals = [self.value(a, ins) for a in args]
        if any(isinstance(v, Ptr) for v in vals) or opcode in ("CompositeExtract", "CompositeInsert", "VectorShuffle"):
            raise Unsupported(ins.node, f"specialization constant operation {opcode}")
        vecs = [v for v in vals if isinstance(v, Vec)]
        if vecs:   # lane by lane (`uvec3 s = gl_WorkGroupSize * 2`)
            n = len(vecs[0].lanes)
            if any(len(v.lanes) != n for v in vecs):
                raise Unsupported(ins.node, f"specialization constant operation {opcode} on vectors of two sizes")
            return Vec(tuple(self._spec_apply(opcode, [v.lanes[i] if isinstance(v, Vec) else v for v in vals], ins)
                             for i in range(n)))
        return self._spec_apply(opcode, vals, ins)

    def _spec_apply(self, opcode: str, vals: list, ins: Ins) -> ir.Expr:
        op = "Op" + opcode
        if op in BINOPS and len(vals) == 2:
            return ir.BinOp(BINOPS[op], vals[0], vals[1])
        if op in UNOPS and len(vals) == 1:
            return ir.UnOp(UNOPS[op], vals[0])
        if op == "OpSelect" and len(vals) == 3:
            return ir.Select(vals[0], vals[1], vals[2])
        if op in SAME_VALUE and len(vals) == 1:
            return vals[0]
        raise Unsupported(ins.node, f"specialization constant operation {opcode}")

    def scalar(self, ident: str, ins: Ins) -> ir.Expr:
        v = self.value(ident, ins)
        if isinstance(v, Vec):
            return ir.Call("vec", tuple(self._flat(v)))
        if isinstance(v, Ptr):
            raise Unsupported(ins.node, f"pointer {ident} used as a value")
        return v

    def _flat(self, v) -> list:
        if isinstance(v, Vec):
            return [x for lane in v.lanes for x in self._flat(lane)]
        return [v]

    def bind(self, ins: Ins, v) -> None:
        self.values[ins.result] = v


def _spec_id(m, ident: str) -> str | None:
    dec = m.decorations.get(ident, {}).get("SpecId")
    return dec[0] if dec else None
