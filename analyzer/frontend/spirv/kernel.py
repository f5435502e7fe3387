"""One GLCompute entry point lowered into an IR kernel (its workgroup size, its global variables
as buffers and parameters, its body), and `SpirvLowering`, which reads a module and lowers each
of its entry points. `KernelLowering` holds the per-kernel state and the declarations; the mixins
it is composed of hold the rest, one concern each."""

from __future__ import annotations

import itertools
import re

from lark import Tree

from analyzer import ir
from analyzer.frontend.spirv.barriers import BarriersMixin
from analyzer.frontend.spirv.coalesce import _coalesce
from analyzer.frontend.spirv.control_flow import ControlFlowMixin
from analyzer.frontend.spirv.images import ImagesMixin, channels, image_parts, texel_bytes
from analyzer.frontend.spirv.instructions import InstructionsMixin
from analyzer.frontend.spirv.memory import DIMS, MemoryMixin
from analyzer.frontend.spirv.module import Ins, Module, _at, _number
from analyzer.frontend.spirv.values import Ptr, ValuesMixin
from analyzer.frontend.spirv_tools import NOTE


_LINE = re.compile(r"^\s*#\s*line\s+(\d+)")


def numbered_lines(text: str) -> list[str]:
    """The lines of an embedded source as its `#line` directives number them (the lines OpLine
    names): kernelrace's own `#version` or `#extension` lines put before a shader's first line
    (spirv_tools.with_includes) give way to the lines the directive renumbers."""
    out: dict[int, str] = {}
    n = 1
    for line in text.splitlines():
        m = _LINE.match(line)
        if m:
            n = int(m.group(1))
            continue
        out[n] = line
        n += 1
    return [out.get(i, "") for i in range(1, max(out, default=0) + 1)]


class SpirvLowering:
    lang = "spirv"

    def __init__(self, tree: Tree, text: str, filename: str):
        self.tree = tree
        self.text = text
        self.filename = filename
        self.lines = text.splitlines()

    def lower(self) -> list[ir.Kernel]:
        # Read in lower(), not __init__: what the reading refuses is an Unsupported the caller reports.
        self.module = Module(self.tree, self.filename)
        out = []
        # What compiling the GLSL assumed (spirv_tools.NOTE comments): said with every kernel. It
        # constrains nothing the analysis decides, so its expression is true.
        notes = [ln[len(NOTE):] for ln in self.lines if ln.startswith(NOTE)]
        for fid, name, ins in self.module.entry_points:
            with _at(ins.node):
                kernel = KernelLowering(self, fid, name, ins).lower()
                kernel.assumptions += [(n, ir.BinOp("==", ir.Const(0), ir.Const(0))) for n in notes]
                out.append(kernel)
        return out


class KernelLowering(ControlFlowMixin, InstructionsMixin, BarriersMixin, MemoryMixin, ImagesMixin, ValuesMixin):
    """One entry point: its buffers, parameters and body."""

    def __init__(self, outer: SpirvLowering, fid: str, name: str, ins: Ins):
        self.m = outer.module
        self.filename = outer.filename
        self.fid = fid
        self.entry = ins
        self.kernel = ir.Kernel(name, outer.filename, "spirv", [], {}, [], warp_size=1,
                                source_lines=outer.lines,
                                origin_lines={f: numbered_lines(t) for f, t in self.m.sources.items()})
        self.values: dict[str, object] = {}
        self.locals: dict[str, str] = {}      # Function-storage scalar variable id -> IR variable name
        self.counter = itertools.count()
        self.access_ids = itertools.count(1)
        self.loop_ids = itertools.count(1)
        self.opaque_ids = itertools.count(1)
        self.used: set[str] = set()
        self.spec_names: dict[str, str] = {}  # specialization constant id -> its parameter's name
        self.references: dict[str, str] = {}  # buffer_reference block type id -> its IR buffer
        self.depth = 0
        self._snapshot = False
        self._inline = False
        self.fence = 0                        # semantics of an OpMemoryBarrier waiting for a control barrier

    # ----- names -----
    def fresh(self, hint: str) -> str:
        base = hint.lstrip("%") or "v"
        name = base
        while name in self.used:
            name = f"{base}.{next(self.counter)}"
        self.used.add(name)
        return name

    def span(self, ins: Ins) -> ir.Span:
        origin = ir.Span(*ins.origin) if ins.origin else None
        return ir.Span(self.filename, ins.line, ins.col + 0, origin)

    # ----- the kernel -----
    def lower(self) -> ir.Kernel:
        k = self.kernel
        self._globals()     # first: a push constant keeps its name, a specialization constant yields
        self._extents()
        body = self.function(self.fid, [], top=True)
        k.body = _coalesce(body, self.fresh)
        return k

    def _extents(self) -> None:
        k = self.kernel
        dims: tuple | None = None
        # A WorkgroupSize builtin constant overrides the execution mode.
        for ident, decs in self.m.decorations.items():
            if decs.get("BuiltIn") == ["WorkgroupSize"] and isinstance(self.m.constants.get(ident), tuple):
                parts = self.m.constants[ident]
                dims = tuple(None if p in self.m.spec_constants else self.m.constants.get(p) for p in parts)
        if dims is None and self.fid in self.m.local_size:
            mode, parts = self.m.local_size[self.fid]
            if mode == "LocalSize":
                dims = tuple(_number(p, "LocalSize") for p in parts)
            else:
                dims = tuple(None if p in self.m.spec_constants else self.m.constants.get(p) for p in parts)
        for d, v in zip(DIMS, dims or (None, None, None)):
            k.block_dim[d] = v if isinstance(v, int) else None
            k.grid_dim[d] = None
        # A size the host sets (`local_size_x_id = N`) is the specialization constant the shader
        # reads by its name: one value, so the extent is tied to that parameter.
        parts = self._size_parts()
        for d, p in zip(DIMS, parts):
            if p in self.m.spec_constants and k.block_dim[d] is None:
                name = self._spec_name(p)
                k.assumptions.append((f"blockDim.{d} = {name}, the workgroup size's specialization constant",
                                      ir.BinOp("==", ir.Builtin(f"bdim.{d}"), ir.Param(name))))

    def _size_parts(self) -> tuple:
        """The constant ids of the workgroup size, where the module names them."""
        for ident, decs in self.m.decorations.items():
            if decs.get("BuiltIn") == ["WorkgroupSize"] and isinstance(self.m.constants.get(ident), tuple):
                return self.m.constants[ident]
        if self.fid in self.m.local_size and self.m.local_size[self.fid][0] == "LocalSizeId":
            return self.m.local_size[self.fid][1]
        return ()

    def _globals(self) -> None:
        m = self.m
        by_binding: dict[tuple, str] = {}
        for vid, (ptype, storage, ins) in m.variables.items():
            with _at(ins.node):
                self._global(vid, ptype, storage, ins, by_binding)

    def _global(self, vid: str, ptype: str, storage: str, ins: Ins, by_binding: dict) -> None:
        k, m = self.kernel, self.m
        pointee = m.types[ptype].elem
        if storage in ("StorageBuffer", "Uniform", "PushConstant", "Workgroup", "Private"):
            decs = m.decorations.get(vid, {})
            struct_decs = m.decorations.get(pointee, {})
            if storage == "PushConstant" or (storage == "Uniform" and "BufferBlock" not in struct_decs):
                self.values[vid] = Ptr("param", vid, ir.CONSTANT, ir.Const(0), pointee)
                self._declare_params(pointee)
                return
            if storage == "Private":
                self._local_variable(vid, pointee, ins)
                return
            space = ir.SHARED if storage == "Workgroup" else ir.GLOBAL
            key = ((decs.get("DescriptorSet") or ["0"])[0], (decs.get("Binding") or [vid])[0]) if space == ir.GLOBAL else None
            name = by_binding.get(key) if key else None
            if name is None:
                name = self.fresh(self._buffer_name(vid, pointee))
                if key:
                    by_binding[key] = name
                elem = m.scalar_of(pointee)
                size = None if _has_runtime_array(m, pointee) else m.size(pointee)
                # A binding (or workgroup variable) starts at offset 0, and a runtime array's
                # rows keep their declared length (ir.Buffer.declared).
                k.buffers[name] = ir.Buffer(name, space, m.type_name(elem), m.size(elem), size,
                                            strides=_row_strides(m, pointee), declared=True)
            self.values[vid] = Ptr("mem", name, space, ir.Const(0), pointee)
        elif storage == "UniformConstant" and m.types[pointee].kind in ("image", "sampled_image", "sampler"):
            name = self.fresh(self._buffer_name(vid, pointee))
            t = m.types[pointee]
            if t.kind == "image" and image_parts(t)[2]:   # a storage image: memory (spirv/images.py)
                fmt = image_parts(t)[3]   # elements of a channel each, texels of all the channels
                k.buffers[name] = ir.Buffer(name, ir.GLOBAL, m.type_name(t.elem), max(1, texel_bytes(fmt) // channels(fmt)))
            self.values[vid] = Ptr("image", name, ir.GLOBAL, ir.Const(0), pointee)
        elif storage == "Input":
            builtin = (m.decorations.get(vid, {}).get("BuiltIn") or [None])[0]
            self.values[vid] = Ptr("builtin", builtin or vid, ir.CONSTANT, ir.Const(0), pointee)

    def _declare_params(self, struct: str) -> None:
        t = self.m.types[struct]
        for i, mt in enumerate(t.members):
            name = self.m.member_names.get((struct, i), f"param{i}")
            t = self.m.types[mt]
            address = t.kind == "pointer" and t.storage == "PhysicalStorageBuffer"   # a buffer_reference
            if (t.kind in ("int", "float", "bool") or address) and name not in self.kernel.params:
                self.kernel.params.append(name)

    def _buffer_name(self, vid: str, pointee: str) -> str:
        name = self.m.names.get(vid, "")
        if name:
            return name
        t = self.m.types[pointee]
        if t.kind == "struct" and len(t.members) == 1:
            member = self.m.member_names.get((pointee, 0))
            if member:
                return member
        return self.m.names.get(pointee, "") or vid[1:]

    def _never_written(self, vid: str) -> bool:
        """Whether no instruction of the current function writes through the variable (a store,
        a copy, an atomic, or a call that may) nor through a pointer into it."""
        fn = getattr(self, "fn", None)
        if fn is None:
            return False
        derived = {vid}
        ins_all = [x for b in fn.blocks.values() for x in b.phis + b.ins]
        grew = True
        while grew:
            grew = False
            for x in ins_all:
                if x.result and x.result not in derived and x.op in ("OpAccessChain", "OpInBoundsAccessChain",
                                                                     "OpPtrAccessChain", "OpCopyObject", "OpPhi",
                                                                     "OpSelect", "OpBitcast") \
                        and any(a in derived for a in x.args[1:]):
                    derived.add(x.result)
                    grew = True
        for x in ins_all:
            if x.op == "OpStore" and x.args and x.args[0] in derived:
                return False
            if (x.op in ("OpCopyMemory", "OpCopyMemorySized", "OpFunctionCall") or x.op.startswith("OpAtomic")) \
                    and any(a in derived for a in x.args):
                return False
        return True

    def _local_variable(self, vid: str, pointee: str, ins: Ins) -> list[ir.Stmt]:
        """A per-invocation variable: scalars and vectors are IR variables (a vector's lanes are
        `v.0`, `v.1`, ...), other composites private buffers."""
        m = self.m
        t = m.types[pointee]
        hint = m.names.get(vid, "") or vid[1:]
        init = ins.args[2] if len(ins.args) > 2 else None
        if t.kind in ("int", "float", "bool", "vector"):
            name = self.fresh(hint)
            self.locals[vid] = name
            ptr = Ptr("local", name, ir.PRIVATE, ir.Const(0), pointee)
            self.values[vid] = ptr
            if init is not None:
                return self.store(ptr, self.value(init, ins), ins)
            return []
        name = self.fresh(hint)
        elem = m.scalar_of(pointee)
        if init is not None and _elements(m, pointee) > _COPY_LIMIT and self._never_written(vid):
            # glslang's `indexable`: a constant table (`const uint grid[2048] = {...}` indexed by a
            # variable) copied into each invocation and only read. Too large to copy element by
            # element, it is one read-only table whose values are not used: any value, as an
            # input buffer's.
            self.kernel.buffers[name] = ir.Buffer(name, ir.CONSTANT, m.type_name(elem), m.size(elem),
                                                  m.size(pointee), strides=_row_strides(m, pointee),
                                                  note=f"{name}: a constant table of {_elements(m, pointee)} "
                                                       f"elements, its values not used")
            self.values[vid] = Ptr("mem", name, ir.CONSTANT, ir.Const(0), pointee)
            return []
        self.kernel.buffers[name] = ir.Buffer(name, ir.PRIVATE, m.type_name(elem), m.size(elem), m.size(pointee),
                                              strides=_row_strides(m, pointee))
        ptr = Ptr("mem", name, ir.PRIVATE, ir.Const(0), pointee)
        self.values[vid] = ptr
        if init is not None:
            return self.store(ptr, self.value(init, ins), ins)
        return []


_COPY_LIMIT = 256   # as memory.py's: elements an initializer may store one by one


def _elements(m: Module, tid: str) -> int:
    t = m.types[tid]
    if t.kind in ("array", "vector", "matrix"):
        return t.count * _elements(m, t.elem)
    if t.kind == "struct":
        return sum(_elements(m, x) for x in t.members)
    return 1


def _has_runtime_array(m: Module, tid: str) -> bool:
    t = m.types[tid]
    if t.kind == "rtarray":
        return True
    if t.kind == "struct":
        return any(_has_runtime_array(m, x) for x in t.members)
    return False


def _row_strides(m: Module, tid: str) -> tuple[int, ...]:
    """Row strides in elements of a fixed multi-dimensional array (in-bounds facts)."""
    t = m.types[tid]
    while t.kind == "struct" and len(t.members) == 1:
        tid, t = t.members[0], m.types[t.members[0]]
    strides = []
    if t.kind in ("array", "rtarray"):
        inner = m.types[t.elem]
        elem = m.size(m.scalar_of(tid))
        while inner.kind == "array":
            strides.append(m.stride(t.elem) // elem)
            t = inner
            inner = m.types[inner.elem]
    return tuple(s for s in strides if s > 1)
