"""The instructions of one block lowered in order: integer, logical and float operations on
scalars and vector lanes, bit fields (shifts and masks), composites, extended instructions, subgroup
operations (opaque values),
and the dispatch of loads, stores, atomics, barriers and calls to their own lowering. Separate
from control flow: it sees one block at a time."""

from __future__ import annotations

from analyzer import ir
from analyzer.frontend import bitfields
from analyzer.frontend.lower import Unsupported
from analyzer.frontend.spirv.barriers import CROSS_DEVICE, DEVICE, WORKGROUP
from analyzer.frontend.spirv.module import Block, Ins, _at, _number
from analyzer.frontend.spirv.opcodes import (BINOPS, EFFECTFUL_PREFIXES, FCMP, GLSL_INT, IGNORED, SAME_VALUE,
                                             UNOPS)
from analyzer.frontend.spirv.values import Ptr, Vec

_BIT_FIELDS = ("OpBitFieldInsert", "OpBitFieldSExtract", "OpBitFieldUExtract")


class InstructionsMixin:
    """KernelLowering's instructions: `_snapshot` tells a load of a local variable to copy it
    (a later store in the block would change what it read); `_inline` tells a load of a private
    array that its one use may read the array itself (see `_read_in_place`)."""

    def instructions(self, block: Block) -> list[ir.Stmt]:
        out: list[ir.Stmt] = []
        for i, ins in enumerate(block.ins):
            if ins.op in IGNORED or ins.op == "OpVariable":
                continue
            with _at(ins.node):
                self._snapshot = (ins.op == "OpLoad" and self._local_root(ins.args[1]) is not None
                                  and self._used_after_store(block, i))
                self._inline = ins.op == "OpLoad" and self._read_in_place(block, i)
                out.extend(self.instruction(ins))
        return out

    def _used_after_store(self, block: Block, i: int) -> bool:
        """Whether the value loaded from a local variable at `block.ins[i]` (or anything computed
        from it) is used after a later store to that variable: then the load must copy it."""
        var = self._local_root(block.ins[i].args[1])
        tainted = {block.ins[i].result}
        stored = False
        for ins in block.ins[i + 1:]:
            uses = any(a in tainted for a in ins.args)
            if uses and stored:
                return True
            if uses and ins.result is not None:
                tainted.add(ins.result)
            if ins.op == "OpStore" and self._local_root(ins.args[0]) == var:
                stored = True
        if not stored:
            return False
        # Used by the terminator, a phi, or another block: conservatively, after the store.
        return any(self.fn.uses.get(t, set()) - {block.label} for t in tainted)

    def _read_in_place(self, block: Block, i: int) -> bool:
        """Whether the load at `block.ins[i]` of a private array's element can be a read in the
        one expression that uses it (`c[0] = c[0] + 1`, as the C front ends have it), not a copy
        into a temporary (`t = c[0]; c[0] = t + 1`): the value, and each value computed from it,
        is used once, in this block, and not after anything else writes that array. Such a read
        is the same value as the copy; the loop analyses (progress.py, tile_order.py) recognise
        a counter's increment only in that form, and without their facts the pair queries of
        TVM's persistent Vulkan kernels took several times their Metal twins'."""
        root = self._private_root(block.ins[i].args[1])
        if root is None:
            return False
        tainted = {block.ins[i].result}
        used: set[str] = set()
        written = False
        for ins in block.ins[i + 1:]:
            if not tainted.isdisjoint(ins.args):
                hits = [a for a in ins.args if a in tainted]
                if written or len(hits) > 1 or hits[0] in used:
                    return False
                used.add(hits[0])
                if ins.result is not None:
                    tainted.add(ins.result)
            if ins.op not in ("OpLoad", "OpAccessChain", "OpInBoundsAccessChain") and any(
                    self._private_root(a) == root for a in ins.args):
                written = True
        # No use by another block, or by this one's phis, merge or terminator (`label!`).
        return all(self.fn.uses.get(t, set()) <= {block.label} for t in tainted)

    def _private_root(self, ptr_id: str) -> str | None:
        """The private array a pointer points into (also for access chains of this block not
        lowered yet)."""
        v = self.values.get(ptr_id)
        if isinstance(v, Ptr):
            return v.base if v.kind == "mem" and v.space == ir.PRIVATE else None
        d = self.fn.defs.get(ptr_id)
        if d is not None and d.op in ("OpAccessChain", "OpInBoundsAccessChain"):
            return self._private_root(d.args[1])
        return None

    def _local_root(self, ptr_id: str) -> str | None:
        """The IR variable a pointer into a local variable refers to (also for access chains of
        this block not lowered yet)."""
        v = self.values.get(ptr_id)
        if isinstance(v, Ptr):
            return v.base if v.kind == "local" else None
        d = self.fn.defs.get(ptr_id)
        if d is not None and d.op in ("OpAccessChain", "OpInBoundsAccessChain"):
            return self._local_root(d.args[1])
        return None

    def instruction(self, ins: Ins) -> list[ir.Stmt]:
        op, a, r = ins.op, ins.args, ins.result
        if op in BINOPS:
            self.bind(ins, self._lanes(ins, lambda x, y: ir.BinOp(BINOPS[op], x, y), a[1], a[2]))
            return []
        if op in FCMP:
            self.bind(ins, self._lanes(ins, lambda x, y: ir.Call("fcmp" + FCMP[op], (x, y)), a[1], a[2]))
            return []
        if op in UNOPS:
            self.bind(ins, self._lanes(ins, lambda x: ir.UnOp(UNOPS[op], x), a[1]))
            return []
        if op in SAME_VALUE or (op == "OpBitcast" and self._int_like(a[0]) and self._int_like_value(a[1], ins)):
            self.bind(ins, self.value(a[1], ins))
            return []
        if op == "OpUMulExtended" and len(a) >= 3:
            # umulExtended (a fast division's magic multiply): the 64-bit product's low and high
            # words, exactly, as {lsb, msb}; lane by lane for vectors.
            def words(x, y):
                product = ir.BinOp("*", x, y)
                return Vec((ir.BinOp("%", product, ir.Const(1 << 32)), ir.BinOp("/", product, ir.Const(1 << 32))))
            x, y = self.value(a[1], ins), self.value(a[2], ins)
            if isinstance(x, Vec) or isinstance(y, Vec):
                pairs = self._lanes(ins, words, a[1], a[2])   # {lsb, msb} per lane -> {lsbs, msbs}
                self.bind(ins, Vec((Vec(tuple(p.lanes[0] for p in pairs.lanes)),
                                    Vec(tuple(p.lanes[1] for p in pairs.lanes)))))
                return []
            self.bind(ins, words(x, y))
            return []
        if op == "OpSMulExtended" and len(a) >= 3:
            # imulExtended: the signed product's two words, each a function of the operands
            # (lane by lane), as {lsb, msb}.
            pairs = self._lanes(ins, lambda x, y: Vec((ir.Call("imulExtended.lsb", (x, y)),
                                                       ir.Call("imulExtended.msb", (x, y)))), a[1], a[2])
            if isinstance(pairs, Vec) and all(isinstance(p, Vec) for p in pairs.lanes) and \
                    self.m.types[self.m.types[a[0]].members[0]].kind == "vector":
                pairs = Vec((Vec(tuple(p.lanes[0] for p in pairs.lanes)), Vec(tuple(p.lanes[1] for p in pairs.lanes))))
            self.bind(ins, pairs)
            return []
        if op == "OpSelect":
            self.bind(ins, self._lanes(ins, lambda c, x, y: ir.Select(c, x, y), a[1], a[2], a[3]))
            return []
        if op == "OpLoad":
            return self.load(ins)
        if op == "OpStore":
            ptr = self.pointer(a[0], ins)
            if not isinstance(ptr, Ptr):
                raise Unsupported(ins.node, "store through a value that is not a pointer")
            return self.store(ptr, self.value(a[1], ins), ins)
        if op in ("OpAccessChain", "OpInBoundsAccessChain"):
            self.bind(ins, self.access_chain(ins))
            return []
        if op == "OpControlBarrier":
            return self.control_barrier(ins)
        if op == "OpMemoryBarrier":
            # A fence synchronises no one by itself; before a control barrier it widens what that
            # barrier orders (`memoryBarrierBuffer(); barrier();`).
            scope, sem = self._const(a[0], ins), self._const(a[1], ins)
            if scope in (CROSS_DEVICE, DEVICE, WORKGROUP):
                self.fence |= sem
            return []
        if op.startswith("OpAtomic"):
            return self.atomic(ins)
        if op.startswith("OpImage") or op == "OpSampledImage":
            return self.image(ins)
        if op == "OpCompositeExtract":
            v = self.value(a[1], ins)
            for idx in a[2:]:
                i = _number(idx, "index")
                if not isinstance(v, Vec) or not 0 <= i < len(v.lanes):
                    raise Unsupported(ins.node, "OpCompositeExtract of a non-composite value or out of its range")
                v = v.lanes[i]
            self.bind(ins, v)
            return []
        if op == "OpCompositeConstruct":
            self.bind(ins, Vec(tuple(self.value(x, ins) for x in a[1:])))
            return []
        if op == "OpCompositeInsert":
            v = self.value(a[2], ins)
            self.bind(ins, _insert(v, [_number(x, "index") for x in a[3:]], self.value(a[1], ins), ins))
            return []
        if op == "OpVectorShuffle":
            x, y = self.value(a[1], ins), self.value(a[2], ins)
            if not isinstance(x, Vec) or not isinstance(y, Vec):
                raise Unsupported(ins.node, "OpVectorShuffle of a value that is not a vector")
            lanes = list(x.lanes) + list(y.lanes)
            picks = [_number(i, "component") for i in a[3:]]
            if any(not 0 <= i < len(lanes) and i != 0xFFFFFFFF for i in picks):
                raise Unsupported(ins.node, "OpVectorShuffle component out of range")
            self.bind(ins, Vec(tuple(lanes[i] if i != 0xFFFFFFFF else ir.Const(0) for i in picks)))
            return []
        if op == "OpVectorExtractDynamic":
            v, idx = self.value(a[1], ins), self.scalar(a[2], ins)
            if not isinstance(v, Vec) or not v.lanes:
                raise Unsupported(ins.node, "OpVectorExtractDynamic of a value that is not a vector")
            out = v.lanes[-1]
            for i in range(len(v.lanes) - 2, -1, -1):
                out = ir.Select(ir.BinOp("==", idx, ir.Const(i)), v.lanes[i], out)
            self.bind(ins, out)
            return []
        if op == "OpFunctionCall":
            return self.call(ins)
        if op == "OpExtInst":
            return self.ext_inst(ins)
        if op == "OpArrayLength":
            ptr = self.value(a[1], ins)
            self.bind(ins, ir.Param(f"{getattr(ptr, 'base', a[1])}.length"))
            return []
        if op in _BIT_FIELDS and self._int_width(a[0]) == bitfields.WIDTH:
            self.bind(ins, self.bit_field(ins))
            return []
        if op.startswith(("OpGroup", "OpSubgroup")):
            # Subgroup operations exchange values between invocations: per invocation, unknown.
            self.bind(ins, self._opaque(ins, f"result of {op}"))
            return []
        if op == "OpUndef":
            self.bind(ins, ir.Opaque("undefined value", next(self.opaque_ids)))
            return []
        if r is not None and not op.startswith(EFFECTFUL_PREFIXES):
            # Float arithmetic, conversions, math: a pure function of its operands.
            args = [x for x in a[1:] if x.startswith("%")]
            vals = [self.value(x, ins) for x in args]
            if any(isinstance(v, Ptr) for v in vals):
                raise Unsupported(ins.node, f"{op} on a pointer")
            n = max((len(v.lanes) for v in vals if isinstance(v, Vec)), default=0)
            rt = self.m.types.get(a[0]) if a else None
            if op in _MATRIX_OPS or (rt is not None and rt.kind == "matrix") or any(
                    isinstance(v, Vec) and any(isinstance(x, Vec) for x in v.lanes) for v in vals):
                # Matrix arithmetic (`m * v`, `transpose(m)`): each result element a function of
                # every operand element, in the result's shape.
                flat = tuple(x for v in vals for x in self._flat_value(v, ins))
                self.bind(ins, self._shaped_call(op, a[0], flat, ()))
                return []
            if rt is not None and rt.kind == "vector" and all(len(v.lanes) == n == rt.count for v in vals
                                                              if isinstance(v, Vec)):
                self.bind(ins, Vec(tuple(ir.Call(op, tuple(v.lanes[i] if isinstance(v, Vec) else v for v in vals))
                                         for i in range(n))))
            else:
                self.bind(ins, ir.Call(op, tuple(self.scalar(x, ins) for x in args)))
            return []
        raise Unsupported(ins.node, op)

    def _opaque(self, ins: Ins, why: str):
        rt = self.m.types.get(ins.args[0])
        if rt is not None and rt.kind == "vector":
            return Vec(tuple(ir.Opaque(why, next(self.opaque_ids)) for _ in range(rt.count)))
        return ir.Opaque(why, next(self.opaque_ids))

    def _int_width(self, tid: str) -> int:
        t = self.m.types.get(tid)
        if t is not None and t.kind == "vector":
            t = self.m.types.get(t.elem)
        return t.width if t is not None and t.kind == "int" else 0

    def bit_field(self, ins: Ins):
        """OpBitFieldInsert and the extracts (GLSL's bitfieldInsert/bitfieldExtract) as shifts and
        masks (frontend/bitfields.py); a field past bit 31 is undefined: an unknown value there."""
        a = ins.args
        t = self.m.types[a[0]]
        signed = (self.m.types[t.elem] if t.kind == "vector" else t).signed
        undefined = lambda: ir.Opaque(f"result of {ins.op} past bit 31", next(self.opaque_ids))  # noqa: E731
        if ins.op == "OpBitFieldInsert":
            return self._lanes(ins, lambda e, n, o, c: bitfields.spirv_defined(
                bitfields.insert(e, n, o, c, signed), o, c, undefined()), a[1], a[2], a[3], a[4])
        sext = ins.op == "OpBitFieldSExtract"
        return self._lanes(ins, lambda e, o, c: bitfields.spirv_defined(
            bitfields.extract(e, o, c, sext), o, c, undefined()), a[1], a[2], a[3])

    def _int_like(self, tid: str) -> bool:
        t = self.m.types.get(tid)
        if t is not None and t.kind == "vector":
            t = self.m.types.get(t.elem)
        return t is not None and t.kind == "int"

    def _int_like_value(self, ident: str, ins: Ins) -> bool:
        v = self.values.get(ident)
        if isinstance(v, Ptr):
            return False
        return True if ident not in self.m.constants else isinstance(self.m.constants[ident], int)

    def _lanes(self, ins: Ins, fn, *idents):
        vals = [self.value(x, ins) for x in idents]
        n = max((len(v.lanes) for v in vals if isinstance(v, Vec)), default=0)
        if n == 0:
            if any(isinstance(v, Ptr) for v in vals):
                raise Unsupported(ins.node, f"{ins.op} on a pointer")
            return fn(*vals)
        if any(isinstance(v, Vec) and len(v.lanes) != n for v in vals):
            raise Unsupported(ins.node, f"{ins.op} on vectors of different lengths")
        return Vec(tuple(fn(*[v.lanes[i] if isinstance(v, Vec) else v for v in vals]) for i in range(n)))

    def ext_inst(self, ins: Ins) -> list[ir.Stmt]:
        a = ins.args
        inst = a[2]
        args = a[3:]
        if self.m.ext_sets.get(a[1], "").startswith("NonSemantic"):
            return []
        if inst in GLSL_INT and len(args) == 2:
            self.bind(ins, self._lanes(ins, lambda x, y: ir.Call(GLSL_INT[inst], (x, y)), *args))
            return []
        rt = self.m.types.get(a[0])
        if inst in _ACROSS_LANES or (inst.startswith(("Pack", "Unpack"))):
            # Each result lane a function of every operand lane (`cross`, `normalize`,
            # `unpackHalf2x16(u)` -> vec2, `packHalf2x16(v)` -> uint): lane i is its own function.
            flat = tuple(x for v in (self.value(y, ins) for y in args) for x in self._flat_value(v, ins))
            if rt is not None and rt.kind == "vector":
                self.bind(ins, Vec(tuple(ir.Call(f"{inst}.{i}", flat) for i in range(rt.count))))
            else:
                self.bind(ins, ir.Call(inst, flat))
            return []
        self.bind(ins, self._lanes(ins, lambda *xs: ir.Call(inst, tuple(xs)), *args))
        return []

    def _shaped_call(self, op: str, tid: str, flat: tuple, at: tuple):
        t = self.m.types.get(tid)
        if t is not None and t.kind in ("vector", "matrix"):
            return Vec(tuple(self._shaped_call(op, t.elem, flat, at + (i,)) for i in range(t.count)))
        return ir.Call(op + "".join(f".{i}" for i in at), flat)

    def _flat_value(self, v, ins: Ins) -> list:
        if isinstance(v, Ptr):
            raise Unsupported(ins.node, f"{ins.op} on a pointer")
        if isinstance(v, Vec):
            return [x for lane in v.lanes for x in self._flat_value(lane, ins)]
        return [v]


_MATRIX_OPS = frozenset({"OpMatrixTimesVector", "OpVectorTimesMatrix", "OpMatrixTimesMatrix", "OpMatrixTimesScalar",
                         "OpTranspose", "OpOuterProduct"})
# GLSL.std.450 instructions whose result lanes are not lane by lane.
_ACROSS_LANES = frozenset("Cross Normalize Length Distance Reflect Refract FaceForward Determinant "
                          "MatrixInverse".split())


def _insert(v, path: list[int], x, ins: Ins):
    if not path:
        return x
    if not isinstance(v, Vec):
        raise Unsupported(ins.node, "OpCompositeInsert into a non-composite value")
    lanes = list(v.lanes)
    if not 0 <= path[0] < len(lanes):
        raise Unsupported(ins.node, "OpCompositeInsert out of the composite's range")
    lanes[path[0]] = _insert(lanes[path[0]], path[1:], x, ins)
    return Vec(tuple(lanes))
