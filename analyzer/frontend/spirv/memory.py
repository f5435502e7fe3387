"""Memory: access chains into byte offsets, loads and stores of buffers and of local variables,
atomics, and loads of builtins and parameter blocks. Separate because it is where the lowering
makes the IR's accesses, the events the analysis checks."""

from __future__ import annotations

import dataclasses
import itertools
import math

from analyzer import ir, messages
from analyzer.frontend import atomics, subgroups
from analyzer.frontend.lower import Unsupported, _add, _mul
from analyzer.frontend.spirv.images import Image
from analyzer.frontend.spirv.module import Ins, Module
from analyzer.frontend.spirv.values import Ptr, Vec

SUBGROUP_BUILTINS = {"SubgroupLocalInvocationId": subgroups.LANE, "SubgroupId": subgroups.SUBGROUP,
                     "NumSubgroups": subgroups.COUNT, "SubgroupSize": subgroups.SIZE}
BUILTIN_VECTORS = {"LocalInvocationId": "tid", "WorkgroupId": "bid", "NumWorkgroups": "gdim", "WorkgroupSize": "bdim"}
DIMS = ("x", "y", "z")
_COPY_LIMIT = 256   # elements a copy of a whole struct or array may take, one access each
# SPIR-V's Scope operand: Workgroup (2) is the block's; Subgroup (3) and Invocation (4) are
# narrower (ir.WARP: atomic with no thread the analysis names); the others the device's or wider.
_SCOPES = {2: ir.BLOCK, 3: ir.WARP, 4: ir.WARP}


class MemoryMixin:
    """KernelLowering's loads, stores and atomics; an access clears a pending fence (`fence`)."""

    def pointer(self, ident: str, ins: Ins):
        """What a pointer operand points to: a Ptr as lowered, or, for a device address (a
        `buffer_reference` value: GL_EXT_buffer_reference, OpTypePointer PhysicalStorageBuffer),
        a pointer into the one IR buffer of its block type at that address. The address comes
        from memory or the host, so two such pointers may point to the same memory: the analysis
        compares their addresses as values it does not know (distinct block types are distinct
        buffers, the stated assumption for every buffer)."""
        v = self.value(ident, ins)
        if isinstance(v, Ptr):
            return v
        d = self.fn.defs.get(ident)
        t = self.m.types.get(d.args[0]) if d is not None and d.args else None
        if t is None or t.kind != "pointer" or t.storage != "PhysicalStorageBuffer":
            return v
        if isinstance(v, Vec):
            raise Unsupported(ins.node, "a device address that is a vector")
        # Addresses are aligned to the element (Vulkan's rule for an access): the value counts
        # elements, so no witness straddles two.
        name = self._reference_buffer(t.elem)
        return Ptr("mem", name, ir.GLOBAL, _mul(v, self.kernel.buffers[name].elem_size), t.elem)

    def _reference_buffer(self, block: str) -> str:
        name = self.references.get(block)
        if name is None:
            m = self.m
            name = self.fresh(m.names.get(block, "") or f"reference{block}")
            self.references[block] = name
            elem = m.scalar_of(block)
            self.kernel.buffers[name] = ir.Buffer(name, ir.GLOBAL, m.type_name(elem), m.size(elem), None,
                                                  display=f"{name} (buffer_reference)",
                                                  note=messages.DEVICE_ADDRESSES.format(buf=name))
        return name

    def access_chain(self, ins: Ins) -> Ptr:
        base = self.pointer(ins.args[1], ins)
        if not isinstance(base, Ptr):
            raise Unsupported(ins.node, "access chain on a value that is not a pointer")
        m = self.m
        ty, offset, path, bounds = base.ty, base.offset, base.path, base.bounds
        if base.kind == "local":
            if len(ins.args) != 3 or m.types[ty].kind != "vector":
                raise Unsupported(ins.node, "access chain into a local that is not a vector")
            idx = self.scalar(ins.args[2], ins)
            if not isinstance(idx, ir.Const):
                # A lane chosen by a variable (`v[i]` on a local vec4): the path holds the index and
                # `bounds` the vector's length; a load selects the lane, a store updates each.
                return Ptr("local", base.base, base.space, offset, m.types[ty].elem, (idx,),
                           ((idx, m.types[ty].count),))
            return Ptr("local", base.base, base.space, offset, m.types[ty].elem, (idx.value,))
        for ident in ins.args[2:]:
            t = m.types[ty]
            if t.kind == "struct":
                i = m.const_int(ident, ins)
                if not 0 <= i < len(t.members):
                    raise Unsupported(ins.node, f"member {i} of a struct of {len(t.members)}")
                offset = _add(offset, ir.Const(m.member_offset(ty, i)))
                path, ty = path + (i,), t.members[i]
                continue
            idx = self.scalar(ident, ins)
            if t.kind in ("array", "rtarray"):
                step, ty = m.stride(ty), t.elem
            elif t.kind == "vector":
                step, ty = m.size(t.elem), t.elem
            elif t.kind == "matrix" and (base.space == ir.PRIVATE or base.kind == "param"):
                # a column: laid out as we choose, or a parameter named by its indices
                step, ty = m.size(t.elem), t.elem
            elif t.kind == "matrix":
                raise Unsupported(ins.node, "access chain into a matrix in buffer memory (its MatrixStride and "
                                            "row or column order)")
            else:
                raise Unsupported(ins.node, f"access chain into a {t.kind}")
            if t.kind != "rtarray" and t.count:
                bounds = bounds + ((idx, t.count),)
            offset = _add(offset, _mul(idx, step))
            path = path + (idx.value if isinstance(idx, ir.Const) else idx,)
        return Ptr(base.kind, base.base, base.space, offset, ty, path, bounds)

    def load(self, ins: Ins) -> list[ir.Stmt]:
        ptr = self.pointer(ins.args[1], ins)
        if not isinstance(ptr, Ptr):
            raise Unsupported(ins.node, "load through a value that is not a pointer")
        span = self.span(ins)
        if ptr.kind == "local" and _dynamic_lane(ptr):
            idx, count = ptr.bounds[0]
            lanes = [ir.Var(f"{ptr.base}.{i}") for i in range(count)]
            val = lanes[-1]
            for i in range(count - 2, -1, -1):
                val = ir.Select(ir.BinOp("==", idx, ir.Const(i)), lanes[i], val)
            if not self._snapshot:
                self.bind(ins, val)
                return []
            tmp = self.fresh(f"{ptr.base}.old")
            self.bind(ins, ir.Var(tmp))
            return [ir.Assign(tmp, val, span)]
        if ptr.kind == "local":
            names = _lane_names(ptr, self.m)
            if not self._snapshot:
                vals = [ir.Var(n) for n in names]
                self.bind(ins, vals[0] if names == [_local_name(ptr)] else Vec(tuple(vals)))
                return []
            # A later store to the variable in this block would change what this load saw.
            temps = [self.fresh(f"{n}.old") for n in names]
            vals = [ir.Var(t) for t in temps]
            self.bind(ins, vals[0] if names == [_local_name(ptr)] else Vec(tuple(vals)))
            return [ir.Assign(t, ir.Var(n), span) for t, n in zip(temps, names)]
        if ptr.kind == "builtin":
            self.bind(ins, self._builtin(ptr, ins))
            return []
        if ptr.kind == "param":
            self.bind(ins, self._param(ptr, ins))
            return []
        if ptr.kind == "image":   # a handle (spirv/images.py)
            self.bind(ins, Image(ptr.base, ptr.ty))
            return []
        t = self.m.types[ptr.ty]
        if t.kind in ("struct", "array", "matrix"):
            # A copy of a whole composite (an array passed by value, `Data d = data[i]`): a load
            # of each element, in a composite value of the type's shape.
            out: list[ir.Stmt] = []
            self.bind(ins, self._load_whole(ptr, ins, out, [_COPY_LIMIT]))
            return out
        acc = self._access(ptr, False, ins)
        if self._inline and t.kind != "vector":
            self.bind(ins, ir.Read(acc))     # read where it is used (InstructionsMixin._read_in_place)
            return []
        tmp = self.fresh(f"{ptr.base}.ld")
        if t.kind == "vector":
            self.bind(ins, Vec(tuple(ir.Call(f"lane{i}", (ir.Var(tmp),)) for i in range(t.count))))
        else:
            self.bind(ins, ir.Var(tmp))
        return [ir.Assign(tmp, ir.Read(acc), span)]

    def store(self, ptr: Ptr, val, ins: Ins) -> list[ir.Stmt]:
        span = self.span(ins)
        if ptr.kind == "local" and _dynamic_lane(ptr):
            idx, count = ptr.bounds[0]
            v = self._as_expr(val)
            return [ir.Assign(f"{ptr.base}.{i}", ir.Select(ir.BinOp("==", idx, ir.Const(i)), v,
                                                          ir.Var(f"{ptr.base}.{i}")), span) for i in range(count)]
        if ptr.kind == "local":
            names = _lane_names(ptr, self.m)
            if names == [_local_name(ptr)]:
                return [ir.Assign(names[0], self._as_expr(val), span)]
            lanes = val.lanes if isinstance(val, Vec) else tuple(ir.Call(f"lane{i}", (val,)) for i in range(len(names)))
            return [ir.Assign(n, self._as_expr(v), span) for n, v in zip(names, lanes)]
        if ptr.kind != "mem":
            raise Unsupported(ins.node, f"store to a {ptr.kind} variable")
        t = self.m.types[ptr.ty]
        if t.kind in ("struct", "array", "matrix"):
            out: list[ir.Stmt] = []
            self._store_whole(ptr, val, ins, out, [_COPY_LIMIT])
            return out
        acc = self._access(ptr, True, ins)
        acc.value = self._as_expr(val)
        return [ir.MemOp(acc)]

    def _parts(self, ptr: Ptr, ins: Ins, left: list) -> list[Ptr]:
        """Pointers to the members or elements of a composite in memory, in order; `left` counts
        down the elements a copy may take (a copy of a large array is one access per element)."""
        m = self.m
        t = m.types[ptr.ty]
        if t.kind == "struct":
            places = [(m.member_offset(ptr.ty, i), mt) for i, mt in enumerate(t.members)]
        elif t.kind == "array":
            places = [(i * m.stride(ptr.ty), t.elem) for i in range(t.count)]
        elif t.kind == "matrix" and ptr.space == ir.PRIVATE:
            places = [(i * m.size(t.elem), t.elem) for i in range(t.count)]
        elif t.kind == "matrix":
            raise Unsupported(ins.node, "copy of a whole matrix in buffer memory (its MatrixStride and row or "
                                        "column order)")
        else:
            raise Unsupported(ins.node, f"copy of a whole {t.kind}")
        left[0] -= len(places)
        if left[0] < 0:
            raise Unsupported(ins.node, f"copy of a whole struct or array of more than {_COPY_LIMIT} elements")
        return [Ptr(ptr.kind, ptr.base, ptr.space, _add(ptr.offset, ir.Const(off)), ty, ptr.path + (i,))
                for i, (off, ty) in enumerate(places)]

    def _load_whole(self, ptr: Ptr, ins: Ins, out: list, left: list):
        kind = self.m.types[ptr.ty].kind
        if kind in ("struct", "array", "matrix"):
            return Vec(tuple(self._load_whole(p, ins, out, left) for p in self._parts(ptr, ins, left)))
        if kind not in ("int", "float", "bool", "vector"):
            raise Unsupported(ins.node, f"copy of a struct holding a {kind}")
        tmp = self.fresh(f"{ptr.base}.ld")
        out.append(ir.Assign(tmp, ir.Read(self._access(ptr, False, ins)), self.span(ins)))
        if kind == "vector":
            return Vec(tuple(ir.Call(f"lane{i}", (ir.Var(tmp),)) for i in range(self.m.types[ptr.ty].count)))
        return ir.Var(tmp)

    def _store_whole(self, ptr: Ptr, val, ins: Ins, out: list, left: list) -> None:
        if self.m.types[ptr.ty].kind not in ("struct", "array", "matrix"):
            out.extend(self.store(ptr, val, ins))
            return
        parts = self._parts(ptr, ins, left)
        if not isinstance(val, Vec) or len(val.lanes) != len(parts):
            raise Unsupported(ins.node, "store of a whole struct or array from a value of another shape")
        for p, v in zip(parts, val.lanes):
            self._store_whole(p, v, ins, out, left)

    def _as_expr(self, val) -> ir.Expr:
        if isinstance(val, Vec):
            return ir.Call("vec", tuple(self._flat(val)))
        return val

    def _access(self, ptr: Ptr, is_write: bool, ins: Ins, atomic: bool = False) -> ir.Access:
        buf = self.kernel.buffers[ptr.base]
        self.fence = 0   # a fence followed by an access no longer sits right before a barrier
        return ir.Access(ptr.base, ptr.space, ptr.offset, self.m.size(ptr.ty), is_write, self.span(ins),
                         elem_size=buf.elem_size, atomic=atomic, id=next(self.access_ids), bounds=ptr.bounds)

    def atomic(self, ins: Ins) -> list[ir.Stmt]:
        op, a = ins.op, ins.args
        ptr_id = a[0] if op == "OpAtomicStore" else a[1]
        ptr = self.pointer(ptr_id, ins)
        if not isinstance(ptr, Ptr) or ptr.kind != "mem":
            raise Unsupported(ins.node, f"{op} on something other than buffer memory")
        is_write = op != "OpAtomicLoad"
        acc = self._access(ptr, is_write, ins, atomic=True)
        scope = _SCOPES.get(getattr(self.scalar(a[1] if op == "OpAtomicStore" else a[2], ins), "value", None))
        if op == "OpAtomicStore":
            acc.value = self.scalar(a[3], ins)
            atomics.mark(acc, "store", scope)
        elif is_write:
            acc.value = ir.Call(op, tuple(self.scalar(x, ins) for x in a[4:]))
        if op == "OpAtomicLoad":   # the thread's own value (frontend/atomics.py)
            result = ir.Opaque(f"result of {op}", next(self.opaque_ids), fetch=atomics.mark(acc, "load", scope))
        elif op != "OpAtomicStore":
            step = self.scalar(a[4], ins) if op in ("OpAtomicIAdd", "OpAtomicISub") and len(a) > 4 else (
                ir.Const(1) if op in ("OpAtomicIIncrement", "OpAtomicIDecrement") else None)
            rty = self.m.types.get(a[0])   # the counter's type, which its amount shares
            result = atomics.fetch_result(op, next(self.opaque_ids), acc, step,
                                          subtract=op in ("OpAtomicISub", "OpAtomicIDecrement"), scope=scope,
                                          unsigned=rty is not None and rty.kind == "int" and not rty.signed)
        if ins.result is not None:
            self.bind(ins, result)
        return [ir.MemOp(acc)]

    def _builtin(self, ptr: Ptr, ins: Ins):
        name = ptr.base
        t = self.m.types[ptr.ty]

        def comp(i):
            if not isinstance(i, int) or not 0 <= i < len(DIMS):
                raise Unsupported(ins.node, f"component {i} of builtin {name}")
            d = DIMS[i]
            if name in BUILTIN_VECTORS:
                return ir.Builtin(f"{BUILTIN_VECTORS[name]}.{d}")
            if name == "GlobalInvocationId":
                return ir.BinOp("+", ir.BinOp("*", ir.Builtin(f"bid.{d}"), ir.Builtin(f"bdim.{d}")),
                                ir.Builtin(f"tid.{d}"))
            raise Unsupported(ins.node, f"builtin {name}")

        if name == "LocalInvocationIndex":
            x, y, z = (ir.Builtin(f"tid.{d}") for d in DIMS)
            bx, by = ir.Builtin("bdim.x"), ir.Builtin("bdim.y")
            return ir.BinOp("+", x, ir.BinOp("*", bx, ir.BinOp("+", y, ir.BinOp("*", by, z))))
        if name in SUBGROUP_BUILTINS:
            # Subgroups as warps, contiguous in the local index: a stated assumption (subgroups.py).
            return subgroups.builtin(self.kernel, SUBGROUP_BUILTINS[name], "gl_SubgroupSize")
        if ptr.path:
            return comp(ptr.path[0])
        if t.kind == "vector":
            return Vec(tuple(comp(i) for i in range(t.count)))
        raise Unsupported(ins.node, f"builtin {name}")

    def _param(self, ptr: Ptr, ins: Ins, left: list | None = None):
        m = self.m
        var_type = m.types[m.variables[ptr.base][0]].elem
        if not ptr.path and m.types[var_type].kind == "struct":   # the whole block: each member
            return Vec(tuple(self._param(dataclasses.replace(ptr, ty=mt, path=(i,)), ins, left)
                             for i, mt in enumerate(m.types[var_type].members)))
        if not ptr.path or not isinstance(ptr.path[0], int):
            raise Unsupported(ins.node, "load of a whole parameter block")
        name = m.member_names.get((var_type, ptr.path[0]), f"param{ptr.path[0]}")
        rest = "".join(f"[{p}]" for p in ptr.path[1:])
        if any(not isinstance(p, int) for p in ptr.path[1:]):
            return self._param_chosen(ptr, var_type, ins)
        t = m.types[ptr.ty]
        if t.kind == "vector":
            return Vec(tuple(self._param_named(f"{name}{rest}[{i}]") for i in range(t.count)))
        if t.kind in ("int", "float", "bool") or (t.kind == "pointer" and t.storage == "PhysicalStorageBuffer"):
            return self._param_named(name + rest)   # a device address too: the host's value
        if t.kind == "struct" or (t.kind in ("array", "matrix") and t.count):
            # A whole struct or array of the block copied (`S s = ubo.s`): a composite of its
            # members' parameters, as a copy from memory is one of its elements' loads.
            tys = t.members if t.kind == "struct" else [t.elem] * t.count
            left = left if left is not None else [_COPY_LIMIT]
            left[0] -= len(tys)
            if left[0] < 0:
                raise Unsupported(ins.node, f"copy of a whole struct or array of more than {_COPY_LIMIT} elements")
            return Vec(tuple(self._param(dataclasses.replace(ptr, ty=mt, path=ptr.path + (i,)), ins, left)
                             for i, mt in enumerate(tys)))
        raise Unsupported(ins.node, f"load of a {t.kind} parameter")

    def _param_named(self, name: str) -> ir.Param:
        # A member of a vector or array (`size[0]`) is a parameter of the kernel too, so that a
        # witness gives it a value and its replay runs.
        if name not in self.kernel.params:
            self.kernel.params.append(name)
        return ir.Param(name)

    def _param_chosen(self, ptr: Ptr, var_type: str, ins: Ins):
        """A parameter block's element chosen by variables (`pc.offsets[i]`): a select over the
        elements the indices may name (at most _CHOICES of them); beyond that, or in an array of
        no fixed length, a value the analysis does not know."""
        m, ty, choices = self.m, var_type, []
        for j, p in enumerate(ptr.path):
            t = m.types[ty]
            if t.kind == "struct" and isinstance(p, int) and 0 <= p < len(t.members):
                ty = t.members[p]
            elif t.kind in ("array", "vector", "matrix") and t.count:
                if not isinstance(p, int):
                    choices.append((j, p, t.count))
                ty = t.elem
            else:
                return self._opaque(ins, "a parameter block's element chosen by a variable")
        if math.prod(c for _, _, c in choices) > _CHOICES:
            return self._opaque(ins, "a parameter block's element chosen by a variable")
        out = None
        for picks in itertools.product(*(range(c) for _, _, c in choices)):
            path = list(ptr.path)
            for (j, _, _), k in zip(choices, picks):
                path[j] = k
            v = self._param(dataclasses.replace(ptr, path=tuple(path)), ins)
            if out is None:
                out = v
                continue
            cond = None
            for (_, idx, _), k in zip(choices, picks):
                eq = ir.BinOp("==", idx, ir.Const(k))
                cond = eq if cond is None else ir.BinOp("&&", cond, eq)
            out = (Vec(tuple(ir.Select(cond, a, b) for a, b in zip(v.lanes, out.lanes))) if isinstance(v, Vec)
                   else ir.Select(cond, v, out))
        return out


# The most elements a select over a parameter block's elements spans.
_CHOICES = 64


def _dynamic_lane(ptr: Ptr) -> bool:
    """A local vector's lane chosen by a variable (`access_chain`)."""
    return bool(ptr.path) and not isinstance(ptr.path[0], int)


def _local_name(ptr: Ptr) -> str:
    return f"{ptr.base}.{ptr.path[0]}" if ptr.path else ptr.base


def _lane_names(ptr: Ptr, m: Module) -> list[str]:
    """The IR variables a local pointer covers: one scalar, or each lane of a vector."""
    t = m.types[ptr.ty]
    if t.kind == "vector" and not ptr.path:
        return [f"{ptr.base}.{i}" for i in range(t.count)]
    return [_local_name(ptr)]
