"""WGSL expressions: places (variables, memory references, vector components), loads, arithmetic,
and calls (constructors, conversions, builtins, atomics, barriers inside expressions, inlined
functions). Integer arithmetic is the IR's; float arithmetic and math builtins are uninterpreted
calls, so equal inputs still give provably equal outputs."""

from __future__ import annotations

import re

from lark import Token, Tree

from analyzer import ir
from analyzer.frontend import atomics, bitfields, images
from analyzer.frontend.c_tree import Unsupported
from analyzer.frontend.c_values import _mul
from analyzer.frontend.wgsl import ray_queries, textures
from analyzer.frontend.wgsl.types import (BOOL, F32, I32, SWIZZLE, U32, ArrayVal, Lane, Local, MatPlace, Pointer, Ref,
                                          Scalar, StructVal, Ty, Vec, layout, scalar, size_of, stride_of)

# Statements and expressions nested deeper than this are refused where they pass the limit (the
# lowering recurses a few Python frames per level); code people and TVM write nests a few dozen.
MAX_NESTING = 150
# The most elements an array value copied as a whole (element by element) may have.
MAX_COPIED = 1024
_CMP = ("==", "!=", "<", "<=", ">", ">=")
# Builtins that fold a vector into one scalar.
_REDUCING = frozenset({"dot", "length", "distance", "all", "any", "determinant"})
# Builtins that unpack one u32 into a vector (lanes, lane type), and those packing a vector into a u32.
_UNPACK = {"unpack2x16float": (2, F32), "unpack2x16snorm": (2, F32), "unpack2x16unorm": (2, F32),
           "unpack4x8snorm": (4, F32), "unpack4x8unorm": (4, F32), "unpack4xI8": (4, I32), "unpack4xU8": (4, U32)}
_PACK = frozenset({"pack4x8snorm", "pack4x8unorm", "pack2x16snorm", "pack2x16unorm", "pack2x16float",
                   "pack4xI8", "pack4xU8", "pack4xI8Clamp", "pack4xU8Clamp"})
# Bit counts of a constant u32, folded (loop bounds such as `i < firstTrailingBit(WG_SIZE)`).
_BIT_COUNTS = {
    "firstTrailingBit": lambda v: (v & -v).bit_length() - 1 if v else 0xFFFFFFFF,
    "firstLeadingBit": lambda v: v.bit_length() - 1 if v else 0xFFFFFFFF,
    "countOneBits": lambda v: bin(v).count("1"),
    "countLeadingZeros": lambda v: 32 - v.bit_length(),
    "countTrailingZeros": lambda v: (v & -v).bit_length() - 1 if v else 32,
}
_ATOMIC_RMW = frozenset({"atomicAdd", "atomicSub", "atomicMax", "atomicMin", "atomicAnd", "atomicOr",
                         "atomicXor", "atomicExchange", "atomicCompareExchangeWeak"})
BARRIERS = {"workgroupBarrier": frozenset({ir.SHARED}), "storageBarrier": frozenset({ir.GLOBAL}),
            "textureBarrier": frozenset(), "subgroupBarrier": frozenset()}
# naga's `subgroupBarrier()` is OpControlBarrier with Subgroup execution and memory scope: the
# subgroup's invocations meet, and no memory is ordered beyond one subgroup (as spirv/barriers.py reads it).
BARRIER_SCOPES = {"subgroupBarrier": ir.WARP}


def _float_lit(text: str) -> ir.Expr:
    t = text.rstrip("fh")
    try:
        v = float.fromhex(t) if t.lower().startswith("0x") else float(t)
    except (ValueError, OverflowError):
        v = t
    return ir.Call(f"float:{v!r}", ())


def _has_state(e) -> bool:
    """Whether an expression reads memory or variables (so binding it by name must copy it now)."""
    stack = [e]
    while stack:
        x = stack.pop()
        if isinstance(x, (ir.Read, ir.Var, ir.Opaque)):
            return True
        stack.extend(ir.operands(x))
    return False


def _leaves(v):
    """The scalars and vectors of a value, through struct members and array elements."""
    if isinstance(v, StructVal):
        for m in v.members.values():
            yield from _leaves(m)
    elif isinstance(v, ArrayVal):
        for e in v.elems:
            yield from _leaves(e)
    elif isinstance(v, (Scalar, Vec)):
        yield v


def _comps(v) -> tuple:
    return v.comps if isinstance(v, Vec) else (v.expr,) if isinstance(v, Scalar) else ()


# A matrix constructor without its component type: the values' (labelled f32, a value held in
# variables, whose places' types say how memory holds it).
_BARE_MATRIX = re.compile(r"mat[234]x[234]")


def _buffer_of_array(base: Ref, idx: ir.Expr, node) -> Ref:
    """An element of a binding array of runtime-sized buffers (lower.py): a buffer of its own, where
    nothing says how far apart; their starts are a function of the index that the solver chooses.
    Read only, any placement is one the values allow; written, two buffers' elements could be
    placed on each other: a race no program has."""
    if base.writable:
        raise Unsupported(node, "a binding array of runtime-sized buffers written to (read_write)")
    start = ir.Call(f"binding-array-start:{base.buffer}", (idx,))
    return Ref(base.buffer, base.space, _add(base.offset, start), base.ty.elem, base.writable, base.bounds)


class ExprLowering:
    """Expressions, mixed into KernelLowering."""

    def dispatch(self, node, prefix: str, what: str):
        method = getattr(self, f"{prefix}_{node.data}", None)
        if method is None:
            raise Unsupported(node, f"{what} '{node.data}'")
        if self.nesting >= MAX_NESTING:
            raise Unsupported(node, f"statements and expressions nested too deeply (more than {MAX_NESTING} levels)")
        self.nesting += 1
        try:
            return method(node)
        except Unsupported as exc:
            if exc.node is None:
                exc.node = node
            raise
        except RecursionError:
            raise Unsupported(node, "statements and expressions nested too deeply") from None
        finally:
            self.nesting -= 1

    # ----- places and loads -----
    def value(self, node):
        """What an expression denotes, places (Local, Ref) not yet loaded."""
        return self.dispatch(node, "ex", "expression")

    def rvalue(self, node):
        return self.load(self.value(node), node)

    def scalar_of(self, node) -> ir.Expr:
        v = self.rvalue(node)
        if isinstance(v, Scalar):
            return v.expr
        raise Unsupported(node, "a vector where a scalar is expected")

    def load(self, v, node):
        if isinstance(v, Local):
            if v.ty.kind == "vec":
                return Vec(tuple(ir.Var(f"{v.name}.{i}") for i in range(v.ty.n)), v.ty)
            return Scalar(ir.Var(v.name), v.ty)
        if isinstance(v, Ref):
            if v.ty.kind == "scalar":
                return Scalar(ir.Read(self.access(v, False, node)), v.ty)
            if v.ty.kind == "vec":
                read = ir.Read(self.access(v, False, node))
                return Vec(tuple(ir.Call(f"lane{i}", (read,)) for i in range(v.ty.n)), v.ty)
            if v.ty.kind == "atomic":   # naga reads it as atomicLoad (OpAtomicLoad)
                elem = Ref(v.buffer, v.space, v.offset, v.ty.elem, v.writable)
                return Scalar(ir.Read(atomics.mark(self.access(elem, False, node, atomic=True), "load")), elem.ty)
            if v.ty.kind == "struct":   # member by member, each read where the copy is made
                offsets, _ = layout(v.ty.name, self.module.structs)
                return StructVal({m: self.load(Ref(v.buffer, v.space, _add(v.offset, ir.Const(off)), mt, v.writable), node)
                                  for m, (off, mt) in offsets.items()}, v.ty)
            if v.ty.kind in ("array", "mat") and v.ty.n is not None and v.ty.n <= MAX_COPIED:
                step = stride_of(v.ty, self.module.structs)
                return ArrayVal(tuple(self.load(Ref(v.buffer, v.space, _add(v.offset, ir.Const(i * step)), v.ty.elem,
                                                    v.writable), node) for i in range(v.ty.n)),
                                v.ty, next(self.opaque_ids))
            raise Unsupported(node, f"a value of type {v.ty} copied as a whole")
        if isinstance(v, Lane):
            return Scalar(_pick(self.load(v.vec, node).comps, v.index), v.vec.ty.elem)
        if isinstance(v, StructVal):   # a struct variable's members (places) as values
            return StructVal({m: self.load(x, node) for m, x in v.members.items()}, v.ty)
        if isinstance(v, MatPlace):
            return ArrayVal(tuple(self.load(c, node) for c in v.cols), v.ty, next(self.opaque_ids))
        if isinstance(v, tuple):
            raise Unsupported(node, "a module-scope private variable used before the entry point declares it")
        return v

    def access(self, ref: Ref, is_write: bool, node, atomic: bool = False, value=None) -> ir.Access:
        buf = self.kernel.buffers[ref.buffer]
        width = size_of(ref.ty, self.module.structs) or buf.elem_size
        return ir.Access(ref.buffer, ref.space, ref.offset, width, is_write, self.span(node),
                         elem_size=buf.elem_size, atomic=atomic, value=value, id=next(self.access_ids),
                         bounds=ref.bounds)

    def ex_name(self, node):
        name = str(node.children[0])
        v = self.lookup(name, node)
        return v

    def ex_int_lit(self, node):
        text = str(node.children[0])
        ty = U32 if text.endswith("u") else I32
        digits = text.rstrip("iu")
        if len(digits) > 20:
            raise Unsupported(node, "integer literal out of range")
        value = int(digits, 16) if digits[:2] in ("0x", "0X") else int(digits, 10)
        if value >= 1 << 32:
            raise Unsupported(node, "integer literal out of range")
        return Scalar(ir.Const(value), ty)

    def ex_float_lit(self, node):
        text = str(node.children[0])
        return Scalar(_float_lit(text), scalar("f16") if text.endswith("h") else F32)

    def ex_true_lit(self, node):
        return Scalar(ir.Const(1), BOOL)

    def ex_false_lit(self, node):
        return Scalar(ir.Const(0), BOOL)

    def ex_template_type(self, node):
        raise Unsupported(node, "a type used as a value")

    def ex_index(self, node):
        base_n, idx_n = node.children
        base = self.value(base_n)
        if isinstance(base, Pointer):
            base = base.target
        idx = self.scalar_of(idx_n)
        if isinstance(base, Ref):
            t = base.ty
            if t.kind == "array" and size_of(t.elem, self.module.structs) is None:
                return _buffer_of_array(base, idx, node)
            if t.kind in ("array", "mat"):
                step = stride_of(t, self.module.structs)
            elif t.kind == "vec":
                step = size_of(t.elem, self.module.structs)
            else:
                raise Unsupported(node, f"indexing a value of type {t}")
            bounds = base.bounds + (((idx, t.n),) if t.n else ())
            return Ref(base.buffer, base.space, _add(base.offset, _mul(idx, step)), t.elem, base.writable, bounds)
        if isinstance(base, Local) and base.ty.kind == "vec":
            if isinstance(idx, ir.Const) and 0 <= idx.value < base.ty.n:
                return Local(f"{base.name}.{idx.value}", base.ty.elem)
            if not isinstance(idx, ir.Const):
                return Lane(base, idx)
            base = self.load(base, node)
        if isinstance(base, Vec):
            return Scalar(_pick(base.comps, idx), base.ty.elem)
        if isinstance(base, ArrayVal):
            return self._array_element(base, idx, node)
        if isinstance(base, textures.Texture) and base.ty.kind == "binding_array":
            return base.element(idx)
        raise Unsupported(node, "indexing this value")

    def ex_member(self, node):
        base_n, name_t = node.children
        name = str(name_t)
        base = self.value(base_n)
        if isinstance(base, Pointer):
            base = base.target
        if isinstance(base, StructVal):
            if name not in base.members:
                raise Unsupported(node, f"no member '{name}'")
            return base.members[name]
        if isinstance(base, Ref) and base.ty.kind == "struct":
            offsets, _ = layout(base.ty.name, self.module.structs)
            if name not in offsets:
                raise Unsupported(node, f"no member '{name}'")
            off, mt = offsets[name]
            return Ref(base.buffer, base.space, _add(base.offset, ir.Const(off)), mt, base.writable, base.bounds)
        comps = [SWIZZLE.get(c) for c in name]
        if None in comps:
            raise Unsupported(node, f"member '{name}'")
        if isinstance(base, (Ref, Local)) and base.ty.kind == "vec":
            elem = base.ty.elem
            if len(comps) == 1:
                if isinstance(base, Local):
                    return Local(f"{base.name}.{comps[0]}", elem)
                size = size_of(elem, self.module.structs)
                return Ref(base.buffer, base.space, _add(base.offset, ir.Const(comps[0] * size)), elem, base.writable,
                           base.bounds)
            base = self.load(base, node)
        if isinstance(base, Vec):
            picked = tuple(base.comps[i] for i in comps if i < len(base.comps))
            if len(picked) != len(comps):
                raise Unsupported(node, f"swizzle '{name}' of a {base.ty}")
            if len(picked) == 1:
                return Scalar(picked[0], base.ty.elem)
            return Vec(picked, Ty("vec", elem=base.ty.elem, n=len(picked)))
        raise Unsupported(node, f"member '{name}' of this value")

    def ex_unop(self, node):
        op_t, a_n = node.children
        op = str(op_t)
        if op == "&":
            target = self.value(a_n)
            if not isinstance(target, (Ref, Local, StructVal)):
                raise Unsupported(node, "the address of a value that is not a variable")
            return Pointer(target)
        if op == "*":
            p = self.value(a_n)
            if isinstance(p, Pointer):
                return p.target
            raise Unsupported(node, "dereferencing a value that is not a pointer")
        a = self.rvalue(a_n)
        return self._map(a, lambda x, ty: self._unop(op, x, ty), node)

    def _unop(self, op: str, x: ir.Expr, ty: Ty) -> ir.Expr:
        if ty.is_float:
            return ir.Call("fneg", (x,)) if op == "-" else ir.Call("f" + op, (x,))
        if op == "-" and isinstance(x, ir.Const):
            return ir.Const(-x.value)
        return ir.UnOp(op, x)

    def _map(self, v, fn, node):
        if isinstance(v, Vec):
            return Vec(tuple(fn(c, v.ty.elem) for c in v.comps), v.ty)
        if isinstance(v, Scalar):
            return Scalar(fn(v.expr, v.ty), v.ty)
        raise Unsupported(node, "an operand that is not a number")

    def ex_binop(self, node):
        a_n, op_t, b_n = node.children
        return self.binop(str(op_t), self.rvalue(a_n), self.rvalue(b_n), node)

    def binop(self, op: str, a, b, node):
        if isinstance(a, ArrayVal) or isinstance(b, ArrayVal):
            return self._matrix_op(op, a, b, node)
        if not isinstance(a, (Scalar, Vec)) or not isinstance(b, (Scalar, Vec)):
            raise Unsupported(node, f"operands of '{op}'")
        if isinstance(a, Vec) or isinstance(b, Vec):
            n = a.ty.n if isinstance(a, Vec) else b.ty.n
            ca = a.comps if isinstance(a, Vec) else (a.expr,) * n
            cb = b.comps if isinstance(b, Vec) else (b.expr,) * n
            vt = a.ty if isinstance(a, Vec) else b.ty
            elem = vt.elem
            out = tuple(self._arith(op, x, y, elem) for x, y in zip(ca, cb))
            return Vec(out, Ty("vec", elem=BOOL, n=n) if op in _CMP else vt)
        ty = a.ty
        return Scalar(self._arith(op, a.expr, b.expr, ty), BOOL if op in _CMP else ty)

    @staticmethod
    def _arith(op: str, a: ir.Expr, b: ir.Expr, ty: Ty) -> ir.Expr:
        if ty.is_float:
            return ir.Call(("fcmp" if op in _CMP else "f") + op, (a, b))
        if isinstance(a, ir.Const) and isinstance(b, ir.Const):
            folded = _fold(op, a.value, b.value)
            if folded is not None:
                return ir.Const(folded)
        return ir.BinOp(op, a, b)

    # ----- calls -----
    def ex_call(self, node):
        callee = node.children[0]
        args = [c for c in node.children[1:] if c is not None]
        if isinstance(callee, Tree):          # vec4<f32>(...), array<f32, 4>(...), bitcast<u32>(x)
            gen = str(callee.children[0])
            if gen == "bitcast":
                ty = self.type_of(callee.children[2])
                return self._map(self.rvalue(args[0]), lambda x, _t: ir.Call(f"bitcast<{ty}>", (x,)), node)
            return self.construct(self.type_of(callee), args, node)
        fn = str(callee)
        if fn == "array":       # `array(a, b, c)`: the element type is the values'
            return self.construct(Ty("array", elem=None, n=len(args)), args, node)
        if _BARE_MATRIX.fullmatch(fn):   # `mat3x3(T, B, N)`: see _BARE_MATRIX
            return self.construct(Ty("mat", elem=Ty("vec", elem=F32, n=int(fn[5])), n=int(fn[3])), args, node)
        if fn in self.module.aliases or fn in self.module.structs or fn in ("i32", "u32", "f32", "f16", "bool") \
                or (fn.startswith("vec") and fn in ("vec2", "vec3", "vec4")) or (len(fn) == 5 and fn[:3] == "vec"):
            if fn in ("vec2", "vec3", "vec4"):
                return self.construct(Ty("vec", elem=None, n=int(fn[3])), args, node)
            return self.construct(self.type_of(Tree("named_type", [Token("NAME", fn)])), args, node)
        if fn in BARRIERS:
            raise Unsupported(node, f"'{fn}' used as a value")
        if fn in self.module.functions:
            return self.inline(fn, args, node)
        if fn.startswith("atomic"):
            return self.atomic(fn, args, node)
        if fn == "workgroupUniformLoad":
            return self.uniform_load(args, node)
        if fn.startswith("texture") and fn not in BARRIERS:
            return self.texture_call(fn, args, node)
        if fn == "arrayLength":
            p = self.value(args[0])
            if not isinstance(p, Pointer) or not isinstance(p.target, Ref):
                raise Unsupported(node, "arrayLength of something other than a buffer")
            name = f"{p.target.buffer}_length"
            if name not in self.kernel.params:
                self.kernel.params.append(name)
            return Scalar(ir.Param(name), U32)
        if fn.startswith("rayQuery"):
            for a in args:   # evaluated for what they read (`RayDesc(..., origins[i], ...)`)
                v = self.value(a)
                self.keep_reads(list(_leaves(v)), a)
            v = ray_queries.call(fn, self.opaque_ids, self.module.structs)
            if v is None:
                raise Unsupported(node, f"ray-query built-in '{fn}'")
            return v
        vals = [self.rvalue(a) for a in args]
        if fn.startswith(("subgroup", "quad")):
            self.keep_reads(vals, node)
            return self.subgroup_call(fn, vals, node)
        if fn == "select" and len(vals) == 3:
            f, t, c = vals
            return self._zip(lambda x, y, z: ir.Select(z, y, x), [f, t, c], f.ty if isinstance(f, Scalar) else f.ty, node)
        if fn in ("min", "max") and vals and not any(v.ty.is_float for v in vals if isinstance(v, (Scalar, Vec))) \
                and len(vals) == 2:
            cmp = "<" if fn == "min" else ">"
            return self._zip(lambda x, y: ir.Select(ir.BinOp(cmp, x, y), x, y), vals, vals[0].ty, node)
        mats = [v for v in vals if isinstance(v, ArrayVal) and v.ty.kind == "mat"]
        if mats and fn in ("determinant", "transpose") and len(vals) == 1:
            flat = _lanes(mats[0])
            if fn == "determinant":
                return Scalar(ir.Call(fn, flat), mats[0].ty.elem.elem)
            t = mats[0].ty
            col = Ty("vec", elem=t.elem.elem, n=t.n)
            return ArrayVal(tuple(Vec(tuple(ir.Call(f"transpose.{c}.{r}", flat) for r in range(t.n)), col)
                                  for c in range(t.elem.n)), Ty("mat", elem=col, n=t.elem.n), next(self.opaque_ids))
        if any(not isinstance(v, (Scalar, Vec)) for v in vals):
            raise Unsupported(node, f"call of '{fn}' with a pointer or composite argument")
        if fn in ("extractBits", "insertBits") and len(vals) == (3 if fn == "extractBits" else 4):
            return self.bit_field(fn, vals, node)
        if fn in _BIT_COUNTS and len(vals) == 1 and isinstance(vals[0], Scalar) and vals[0].ty == U32 \
                and isinstance(vals[0].expr, ir.Const) and 0 <= vals[0].expr.value < 1 << 32:
            return Scalar(ir.Const(_BIT_COUNTS[fn](vals[0].expr.value)), U32)   # `firstTrailingBit(WG_SIZE)`
        if fn in _UNPACK and len(vals) == 1 and isinstance(vals[0], Scalar):
            n, elem = _UNPACK[fn]
            return Vec(tuple(ir.Call(f"{fn}.{i}", (vals[0].expr,)) for i in range(n)), Ty("vec", elem=elem, n=n))
        if fn in _PACK:
            flat = tuple(c for v in vals for c in (v.comps if isinstance(v, Vec) else (v.expr,)))
            return Scalar(ir.Call(fn, flat), U32)
        if fn in _REDUCING:
            flat = tuple(c for v in vals for c in (v.comps if isinstance(v, Vec) else (v.expr,)))
            elem = vals[0].ty.elem if isinstance(vals[0], Vec) else vals[0].ty
            return Scalar(ir.Call(fn, flat), BOOL if fn in ("all", "any") else elem)
        ty = next((v.ty for v in vals if isinstance(v, Vec)), vals[0].ty if vals else F32)
        return self._zip(lambda *xs: ir.Call(fn, xs), vals, ty, node)

    def bit_field(self, fn: str, vals: list, node):
        """`extractBits(e, offset, count)` and `insertBits(e, newbits, offset, count)` as shifts
        and masks (frontend/bitfields.py), with WGSL's clamped field; component-wise on vectors.
        An operand the formula names twice is held in a variable first when it reads memory."""
        if vals[0].ty.is_float or any(v.ty.is_float for v in vals):
            raise Unsupported(node, f"'{fn}' of a float")
        span = self.span(node)
        vals = [self.hold(v, "bits", span) if any(ir.reads_memory(e) for e in _comps(v)) else v for v in vals]
        signed = vals[0].ty.scalar().name == "i32"
        if fn == "extractBits":
            def one(e, offset, count):
                return bitfields.extract(e, *bitfields.wgsl_field(offset, count), signed)
        else:
            def one(e, n, offset, count):
                return bitfields.insert(e, n, *bitfields.wgsl_field(offset, count), signed)
        return self._zip(one, vals, vals[0].ty, node)

    def keep_reads(self, vals: list, node) -> None:
        """The memory reads in the arguments of a call whose result names none of them
        (`subgroupAdd(tile[i])`: an opaque value) as statements of their own: without this they
        left the IR, and a race on what they read went unchecked."""
        span = self.span(node)
        for v in vals:
            self.pending.extend(ir.Eval(e, span) for e in _comps(v) if ir.reads_memory(e))

    def subgroup_call(self, fn: str, vals: list, node):
        """`subgroupAdd(x)`, `subgroupBroadcast(x, 0)`, `quadSwapX(x)`, ...: values exchanged between
        invocations, so per invocation unknown (not a function of its own operands: two
        invocations passing equal values may get different results), as the SPIR-V path has them."""
        opaque = lambda: ir.Opaque(f"result of {fn}", next(self.opaque_ids))  # noqa: E731
        if fn == "subgroupBallot":
            return Vec(tuple(opaque() for _ in range(4)), Ty("vec", elem=U32, n=4))
        if fn in ("subgroupElect", "subgroupAll", "subgroupAny"):
            return Scalar(opaque(), BOOL)
        if not vals or not isinstance(vals[0], (Scalar, Vec)):
            raise Unsupported(node, f"'{fn}' of a composite value")
        if isinstance(vals[0], Vec):
            return Vec(tuple(opaque() for _ in vals[0].comps), vals[0].ty)
        return Scalar(opaque(), vals[0].ty)

    def _zip(self, fn, vals, ty: Ty, node):
        """Apply `fn` component-wise, broadcasting scalars over vectors."""
        n = next((v.ty.n for v in vals if isinstance(v, Vec)), None)
        if n is None:
            return Scalar(fn(*(v.expr for v in vals)), ty)
        comps = [v.comps if isinstance(v, Vec) else (v.expr,) * n for v in vals]
        if any(len(c) != n for c in comps):
            raise Unsupported(node, "vectors of different sizes")
        vt = ty if ty.kind == "vec" else Ty("vec", elem=ty, n=n)
        return Vec(tuple(fn(*xs) for xs in zip(*comps)), vt)

    @staticmethod
    def _convert(x: ir.Expr, src: Ty, dst: Ty) -> ir.Expr:
        """Integer to integer keeps the value (the IR does not model 32-bit wrap-around: the C
        family's convention); anything through a float is an uninterpreted conversion."""
        if src == dst or (not src.is_float and not dst.is_float):
            return x
        if dst.name == "bool" and not src.is_float:
            return ir.BinOp("!=", x, ir.Const(0))
        return ir.Call(f"{dst.name}", (x,), int_arg=dst.is_float and not src.is_float)

    # ----- atomics, uniform loads -----
    def atomic(self, fn: str, args: list, node):
        if not args:
            raise Unsupported(node, f"'{fn}' without arguments")
        p = self.value(args[0])
        if not isinstance(p, Pointer) or not isinstance(p.target, Ref) or p.target.ty.kind != "atomic":
            raise Unsupported(node, f"'{fn}' on something other than an atomic in memory")
        ref = Ref(p.target.buffer, p.target.space, p.target.offset, p.target.ty.elem, p.target.writable)
        vals = [self.scalar_of(a) for a in args[1:]]
        if fn == "atomicLoad":
            return Scalar(ir.Read(atomics.mark(self.access(ref, False, node, atomic=True), "load")), ref.ty)
        if fn == "atomicStore":
            acc = self.access(ref, True, node, atomic=True, value=vals[0] if vals else None)
            self.pending.append(ir.MemOp(atomics.mark(acc, "store")))
            return Scalar(ir.Const(0), ref.ty)
        if fn in _ATOMIC_RMW:
            acc = self.access(ref, True, node, atomic=True, value=ir.Call(fn, tuple(vals)))
            self.pending.append(ir.MemOp(acc))
            adds = fn in ("atomicAdd", "atomicSub") and len(vals) == 1
            result = atomics.fetch_result(fn, next(self.opaque_ids), acc, vals[0] if adds else None,
                                          subtract=fn == "atomicSub", unsigned=ref.ty.name == "u32")
            if fn == "atomicCompareExchangeWeak":
                return StructVal({"old_value": Scalar(result, ref.ty),
                                  "exchanged": Scalar(ir.Opaque("result of atomicCompareExchangeWeak",
                                                                next(self.opaque_ids)), BOOL)})
            return Scalar(result, ref.ty)
        raise Unsupported(node, f"atomic builtin '{fn}'")

    # ----- textures (textures.py) -----
    def texture_call(self, fn: str, args: list, node):
        tex = self.value(args[0]) if args else None
        if fn.startswith("textureGather") and len(args) > 1 and not isinstance(tex, textures.Texture):
            # textureGather(component, t, s, coords): the component comes first
            args = [args[1], args[0]] + list(args[2:])
            tex = self.value(args[0])
        if not isinstance(tex, textures.Texture) or tex.ty.kind in ("sampler", "binding_array"):
            raise Unsupported(node, f"'{fn}' on something other than a texture")
        rest = [self.value(a) for a in args[1:]]
        vals = [self.load(v, a) for v, a in zip(rest, args[1:])
                if not isinstance(v, textures.Texture)]    # samplers are handles
        if any(not isinstance(v, (Scalar, Vec)) for v in vals):
            raise Unsupported(node, f"'{fn}' with a pointer or composite argument")
        if fn in ("textureDimensions", "textureNumLayers", "textureNumLevels", "textureNumSamples"):
            return textures.query(self.kernel, tex, fn)
        if tex.ty.kind == "texture" and fn.startswith(("textureLoad", "textureSample", "textureGather")):
            flat = tuple(c for v in vals for c in (v.comps if isinstance(v, Vec) else (v.expr,)))
            return textures.sampled_value(tex, fn, flat)
        if tex.ty.kind == "storage_texture" and fn in ("textureStore", "textureLoad"):
            return self._texel_access(fn, tex, vals, node)
        raise Unsupported(node, f"'{fn}' on a {tex.ty.kind.replace('_', ' ')}")

    def _texel_access(self, fn: str, tex, vals: list, node):
        """textureStore(t, coords[, layer], value) and textureLoad(t, coords[, layer]) of a
        storage texture: one texel's access, done only inside the texture (WGSL skips the others)."""
        n = textures.dims_of(tex.ty) + textures.arrayed(tex.ty)
        coord = vals[0].comps if isinstance(vals[0], Vec) else (vals[0].expr,)
        coords = coord + ((vals[1].expr,) if textures.arrayed(tex.ty) and len(vals) > 1 else ())
        if tex.index is not None:   # a binding array's texture: its index is the outermost coordinate
            coords, n = coords + (tex.index,), n + 1
        if len(coords) != n:
            raise Unsupported(node, f"'{fn}' with {len(coords)} coordinates for a {n}-coordinate texture")
        span = self.span(node)
        width = tex.ty.n or 4
        lanes = textures.channels(tex.ty)    # the texel's lanes in memory; a load gives four
        if fn == "textureStore":
            texel = vals[-1]
            comps = (texel.comps if isinstance(texel, Vec) else (texel.expr,))[:lanes]
            value = ir.Call("vec", comps) if len(comps) > 1 else comps[0]
            self.pending.append(images.texel_write(self.kernel, tex.name, width, coords, value, span,
                                                   next(self.access_ids)))
            return Scalar(ir.Const(0), tex.ty.elem)
        held = self.fresh(f"{tex.name}_texel")
        self.pending.append(images.texel_read(self.kernel, tex.name, width, coords, held, span, next(self.access_ids)))
        one = _float_lit("1.0") if tex.ty.elem.is_float else ir.Const(1)
        zero = _float_lit("0.0") if tex.ty.elem.is_float else ir.Const(0)
        texel = (ir.Var(held),) if lanes == 1 else tuple(ir.Call(f"lane{i}", (ir.Var(held),)) for i in range(lanes))
        missing = (zero,) * (3 - lanes) + (one,) if lanes < 4 else ()   # (r, 0, 0, 1) and the like
        return Vec(texel + missing, Ty("vec", elem=tex.ty.elem, n=4))

    def uniform_load(self, args: list, node):
        """`workgroupUniformLoad(p)`: a workgroup barrier, the load, and another barrier."""
        p = self.value(args[0]) if args else None
        if not isinstance(p, Pointer) or not isinstance(p.target, Ref):
            raise Unsupported(node, "workgroupUniformLoad of something other than workgroup memory")
        span = self.span(node)
        text = "workgroupUniformLoad"
        self.pending.append(ir.Barrier(ir.BLOCK, frozenset({ir.SHARED}), span, text))
        ref = p.target
        if ref.ty.kind == "atomic":
            ref = Ref(ref.buffer, ref.space, ref.offset, ref.ty.elem, ref.writable)
        val = self.load(ref, node)
        held = self.hold(val, "uniform_load", span)
        self.pending.append(ir.Barrier(ir.BLOCK, frozenset({ir.SHARED}), span, text))
        return held

    def hold(self, val, hint: str, span: ir.Span):
        """A value copied into fresh variables now (pending), so that later uses read the copy."""
        if isinstance(val, Scalar):
            if not _has_state(val.expr):
                return val
            name = self.fresh(hint)
            self.pending.append(ir.Assign(name, val.expr, span))
            return Scalar(ir.Var(name), val.ty)
        if isinstance(val, Vec):
            if not any(_has_state(c) for c in val.comps):
                return val
            name = self.fresh(hint, len(val.comps))
            for i, c in enumerate(val.comps):
                self.pending.append(ir.Assign(f"{name}.{i}", c, span))
            return Vec(tuple(ir.Var(f"{name}.{i}") for i in range(len(val.comps))), val.ty)
        if isinstance(val, StructVal):
            return StructVal({m: self.hold(x, f"{hint}.{m}", span) for m, x in val.members.items()}, val.ty)
        if isinstance(val, ArrayVal):
            return ArrayVal(tuple(self.hold(x, f"{hint}.{i}", span) for i, x in enumerate(val.elems)), val.ty,
                            val.key)
        return val

    # ----- user functions -----
def _lanes(v) -> tuple:
    if isinstance(v, ArrayVal):
        return tuple(c for e in v.elems for c in _lanes(e))
    if isinstance(v, Vec):
        return v.comps
    if isinstance(v, Scalar):
        return (v.expr,)
    return ()


def _fold(op: str, a, b):
    """A constant expression's value (WGSL's const-expressions: array sizes, workgroup sizes),
    where it needs no choice of rounding or wrap-around: non-negative operands of / % and shifts."""
    if not (isinstance(a, int) and isinstance(b, int)):
        return None
    if op in ("+", "-", "*"):
        return {"+": a + b, "-": a - b, "*": a * b}[op]
    if a < 0 or b < 0:
        return None
    if op in ("/", "%"):
        return (a // b if op == "/" else a % b) if b else None
    if op in ("&", "|", "^"):
        return {"&": a & b, "|": a | b, "^": a ^ b}[op]
    if op == "<<" and b < 32 and a << b < 1 << 31:
        return a << b
    if op == ">>" and b < 32:
        return a >> b
    return None


def _pick(comps, idx: ir.Expr) -> ir.Expr:
    """Component `idx` of a vector, as a chain of selects when the index is not a constant."""
    if isinstance(idx, ir.Const):
        if 0 <= idx.value < len(comps):
            return comps[idx.value]
        return comps[-1]   # WGSL clamps an out-of-range constant index of a vector
    out = comps[-1]
    for i in range(len(comps) - 2, -1, -1):
        out = ir.Select(ir.BinOp("==", idx, ir.Const(i)), comps[i], out)
    return out


def _add(a: ir.Expr, b: ir.Expr) -> ir.Expr:
    if isinstance(b, ir.Const) and b.value == 0:
        return a
    if isinstance(a, ir.Const) and a.value == 0:
        return b
    if isinstance(a, ir.Const) and isinstance(b, ir.Const):
        return ir.Const(a.value + b.value)
    if isinstance(b, ir.Const) and isinstance(a, ir.BinOp) and a.op == "+" and isinstance(a.b, ir.Const):
        return _add(a.a, ir.Const(a.b.value + b.value))   # member of a member: one constant offset
    return ir.BinOp("+", a, b)
