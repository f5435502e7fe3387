"""A WGSL module lowered into the kernel IR: one `ir.Kernel` per `@compute` entry point.

Module-scope declarations become buffers (`var<storage>` global memory, `var<workgroup>` shared
memory), parameters (the scalar members of a `var<uniform>` struct, as TVM passes its scalar
arguments; `override` constants) and constants. Functions are inlined at their calls. WGSL's
memory model decides the barriers: `workgroupBarrier()` is a control barrier ordering workgroup
memory only, `storageBarrier()` one ordering storage memory only, `workgroupUniformLoad(p)` a
workgroup barrier, the load, and a second barrier (as Tint lowers it). WGSL promises no subgroup
size nor lockstep execution, so the kernel's warp size is 1, as for SPIR-V.
"""

from __future__ import annotations

import itertools
import re

from lark import Token, Tree

from analyzer import ir
from analyzer.frontend import subgroups
from analyzer.frontend.c_tree import Unsupported, position
from analyzer.frontend.wgsl import ray_queries, textures
from analyzer.frontend.wgsl.composites import CompositeLowering
from analyzer.frontend.wgsl.exprs import ExprLowering
from analyzer.frontend.wgsl.inlining import InlineLowering
from analyzer.frontend.wgsl.stmts import StmtLowering
from analyzer.frontend.wgsl.types import (Local, Ref, Scalar, Struct, StructVal, Ty, Vec, scalar,
                                          size_of, stride_of)

DIMS = ("x", "y", "z")
_BUILTIN_VECS = {"local_invocation_id": "tid", "workgroup_id": "bid", "num_workgroups": "gdim"}
_SUBGROUP_BUILTINS = {"subgroup_invocation_id": subgroups.LANE, "subgroup_id": subgroups.SUBGROUP,
                      "num_subgroups": subgroups.COUNT, "subgroup_size": subgroups.SIZE}


def kids(node: Tree) -> list:
    """A node's children without placeholders."""
    return [c for c in node.children if c is not None]


def trees(node: Tree, data: str | None = None) -> list[Tree]:
    return [c for c in node.children if isinstance(c, Tree) and (data is None or c.data == data)]


def names(node: Tree) -> list[str]:
    return [str(c) for c in node.children if isinstance(c, Token) and c.type == "NAME"]


_MAT_SHORT = re.compile(r"^mat([234])x([234])([fh])$")

class WgslLowering:
    """Reads a module's declarations, then lowers each `@compute` entry point."""

    lang = "wgsl"

    def __init__(self, tree: Tree, text: str, filename: str, composed=None):
        self.composed = composed
        self.tree = tree
        self.filename = filename
        self.lines = text.splitlines()
        # With imported modules (wgsl/imports.py): the composed text's lines, each line's origin,
        # and the modules' own lines for reports.
        self.origins = composed.origins if composed is not None else None
        self.shown_lines = composed.text.split("\n") if self.origins else self.lines
        self.module_lines = {f: t.splitlines() for f, t in composed.modules.items()} if self.origins else {}

    def span(self, node) -> ir.Span:
        """Where a node is: the file's own line, or a composed line with its module's as origin."""
        line, col = position(node)
        if self.origins and 0 < line <= len(self.origins) and self.origins[line - 1][0] != self.filename:
            file, mline = self.origins[line - 1]
            return ir.Span(self.filename, line, col, ir.Span(file, mline, col))
        return ir.Span(self.filename, line, col)

    def lower(self) -> list[ir.Kernel]:
        """Every entry point of every module in the file. TVM's source for a build concatenates
        one module per kernel, each after a `// Function: NAME` comment and each declaring its own
        `PODArgs` and `podArgs`: each such comment starts a module."""
        lines = self.lines
        starts = [i + 1 for i, line in enumerate(lines)
                  if line.startswith("// Function: ") and i + 1 < len(lines) and lines[i + 1].startswith("//----")]
        segments: dict[int, list[Tree]] = {}
        for item in self.tree.children:
            if isinstance(item, Tree):
                line = position(item)[0]
                segments.setdefault(sum(1 for s in starts if s <= line), []).append(item)
        return [k for _, items in sorted(segments.items()) for k in self._lower_module(items)]

    def _lower_module(self, items: list[Tree]) -> list[ir.Kernel]:
        self.structs: dict[str, Struct] = {}     # filled by the first kernel (sizes may name constants)
        self.struct_trees: list[Tree] = []
        self.struct_named: dict[str, Tree] = {}
        self.aliases: dict[str, Tree] = {}
        self.globals: list[Tree] = []          # global_var and global_value, in order
        self.functions: dict[str, Tree] = {}
        entries = []
        for item in items:
            if item.data == "struct_decl":
                self.struct_trees.append(item)
                self.struct_named[names(item)[0]] = item
            elif item.data == "alias_decl":
                self.aliases[names(item)[0]] = trees(item)[0]
            elif item.data in ("global_var", "global_value"):
                self.globals.append(item)
            elif item.data == "function":
                name = names(item)[0]
                self.functions[name] = item
                if "compute" in attributes(item):
                    entries.append(item)
        for name, item in (self.composed.renamed if self.composed is not None else {}).items():
            # `import a::b::item as name`: `name` is the item (a module's alias `c` names no item)
            for table in (self.functions, self.aliases):
                if item in table and name not in table:
                    table[name] = table[item]
        return [KernelLowering(self, fn).lower() for fn in entries]


class _Pending:
    """A module-scope `const`/`override` not yet evaluated."""

    def __init__(self, tree: Tree):
        self.tree = tree
        self.busy = False


def attributes(node: Tree) -> dict:
    """A declaration's attributes: name -> its first argument (a builtin's name, an int), or True;
    `workgroup_size` -> the list of its argument trees."""
    out: dict = {}
    for attrs in trees(node, "attrs"):
        for a in trees(attrs, "attribute"):
            name = str(trees(a, "attr_name")[0].children[0])
            args = [c for c in a.children[1:] if c is not None]
            if name == "workgroup_size":
                out[name] = args
            elif not args:
                out[name] = True
            elif isinstance(args[0], Tree) and args[0].data == "name":
                out[name] = str(args[0].children[0])
            elif isinstance(args[0], Tree) and args[0].data == "int_lit":
                out[name] = int(str(args[0].children[0]).rstrip("iu"), 0)
            else:
                out[name] = args[0]
    return out


class KernelLowering(StmtLowering, ExprLowering, CompositeLowering, InlineLowering):
    """One entry point: its buffers, parameters, launch extents and body."""

    def __init__(self, module: WgslLowering, fn: Tree):
        self.module = module
        self.fn = fn
        self.filename = module.filename
        name = names(fn)[0]
        self.kernel = ir.Kernel(name, module.filename, "wgsl", [], {}, [], warp_size=1,
                                source_lines=module.shown_lines, origin_lines=dict(module.module_lines))
        self.scopes: list[dict] = [{}]
        self.used: set[str] = set()
        self.counter = itertools.count(1)
        self.access_ids = itertools.count(1)
        self.loop_ids = itertools.count(1)
        self.opaque_ids = itertools.count(1)
        self.pending: list[ir.Stmt] = []
        self.inline_stack: list[str] = []
        self.return_var: str | None = None
        self.nesting = 0
        self.wg_overrides: dict[str, str] = {}   # override name -> "bdim.x" when it sizes the workgroup

    # ----- helpers -----
    def span(self, node) -> ir.Span:
        return self.module.span(node)

    def fresh(self, hint: str, lanes: int = 0) -> str:
        """An unused IR name; with `lanes`, the names of a vector's components (`name.0`, ...) are
        taken too, so that no other variable is called like one of them."""
        name = hint
        while name in self.used or any(f"{name}.{i}" in self.used for i in range(lanes)):
            name = f"{hint}_{next(self.counter)}"
        self.used.add(name)
        self.used.update(f"{name}.{i}" for i in range(lanes))
        return name

    def lookup(self, name: str, node):
        for scope in reversed(self.scopes):
            if name in scope:
                v = scope[name]
                return self._force(name, v) if isinstance(v, _Pending) else v
        c = ray_queries.constant(name)
        if c is not None:
            return c
        if name.isupper() and len(name) > 1:   # a constant or shader def the host supplies
            raise Unsupported(node, f"unknown name '{name}' (if the host defines it, pass -D {name}=VALUE)")
        raise Unsupported(node, f"unknown name '{name}'")

    def _force(self, name: str, pending: "_Pending"):
        """A module-scope constant used before its declaration is read (WGSL's module scope has no
        order): evaluated now, in module scope alone."""
        if pending.busy:
            raise Unsupported(pending.tree, f"'{name}' defined in terms of itself")
        pending.busy = True
        saved, self.scopes = self.scopes, [self.scopes[0]]
        try:
            self._global(pending.tree)
        finally:
            self.scopes = saved
        return self.scopes[0][name]

    def bind(self, name: str, value) -> None:
        self.scopes[-1][name] = value

    # ----- types -----
    def type_of(self, node: Tree) -> Ty:
        if node.data == "type":
            node = node.children[0]
        if node.data == "named_type":
            n = str(node.children[0])
            if n in self.module.aliases:
                return self.type_of(self.module.aliases[n])
            if n in self.module.structs:
                return Ty("struct", n)
            if n in self.module.struct_named:   # declared further on (module scope has no order)
                self._struct(self.module.struct_named[n])
                return Ty("struct", n)
            if n.startswith("vec") and len(n) == 5 and n[3] in "234" and n[4] in "ifuh":
                return Ty("vec", elem=scalar({"i": "i32", "u": "u32", "f": "f32", "h": "f16"}[n[4]]), n=int(n[3]))
            if n in ("i32", "u32", "f32", "f16", "bool"):
                return scalar(n)
            m = _MAT_SHORT.match(n)
            if m:   # mat4x4f: mat4x4<f32>
                elem = scalar({"f": "f32", "h": "f16"}[m.group(3)])
                return Ty("mat", elem=Ty("vec", elem=elem, n=int(m.group(2))), n=int(m.group(1)))
            if n.startswith(("texture_", "sampler")):
                return textures.texture_type(n, [], node)
            if n == "acceleration_structure":
                return ray_queries.ACCELERATION
            if n == "ray_query":
                return ray_queries.RAY_QUERY
            if n in ray_queries.STRUCTS:   # a built-in struct named before any kernel declared it
                ray_queries.declare(self.module.structs)
                return Ty("struct", n)
            raise Unsupported(node, f"type '{n}'")
        if node.data == "name":   # a type written inside a template list
            return self.type_of(Tree("named_type", node.children))
        if node.data == "template_type":
            gen = str(node.children[0])
            args = [c for c in node.children[1:] if isinstance(c, Tree)]
            if gen in ("vec2", "vec3", "vec4"):
                return Ty("vec", elem=self.type_of(args[0]), n=int(gen[3]))
            if gen == "array":
                n = None
                if len(args) > 1:
                    v = self.rvalue(args[1])
                    if isinstance(v, Scalar) and isinstance(v.expr, ir.Const):
                        n = v.expr.value
                    elif not (isinstance(v, Scalar) and isinstance(v.expr, (ir.Builtin, ir.Param))):
                        raise Unsupported(args[1], "an array size that is neither a constant nor an override")
                # An override-sized array has no size the analysis may assume: any index is in it.
                return Ty("array", elem=self.type_of(args[0]), n=n)
            if gen == "atomic":
                return Ty("atomic", elem=self.type_of(args[0]))
            if gen == "ptr":
                space = str(args[0].children[0]) if args[0].data == "name" else "function"
                return Ty("ptr", name=space, elem=self.type_of(args[1]))
            if gen.startswith("mat"):
                cols, rows = int(gen[3]), int(gen[5])
                return Ty("mat", elem=Ty("vec", elem=self.type_of(args[0]), n=rows), n=cols)
            if gen.startswith("texture_"):
                return textures.texture_type(gen, [str(a.children[0]) for a in args if a.data == "name"], node)
            if gen == "binding_array":
                return self._binding_array(args, node)
            raise Unsupported(node, f"type '{gen}'")
        raise Unsupported(node, "type")

    # ----- the kernel -----
    def lower(self) -> ir.Kernel:
        k = self.kernel
        self._workgroup_size_overrides()
        values = [g for g in self.module.globals if g.data == "global_value"]
        for g in values:
            self.scopes[0][names(g)[0]] = _Pending(g)
        for g in values:
            if isinstance(self.scopes[0].get(names(g)[0]), _Pending):
                self._global(g)
        for item in self.module.struct_trees:
            if names(item)[0] not in self.module.structs:
                self._struct(item)
        ray_queries.declare(self.module.structs)   # RayDesc, RayIntersection, unless declared
        for g in self.module.globals:
            if g.data == "global_var":
                self._global(g)
        self._extents()
        self._entry_params()
        body = self.function_body(self.fn)
        k.body = body
        return k

    def _binding_array(self, args: list, node) -> Ty:
        """`binding_array<T, N>`: of textures or samplers, handles whose index picks one; of a
        buffer's type, one buffer of N elements (bindings never alias, and each holds one T); of a
        runtime-sized buffer's, one buffer whose elements start where the index says."""
        elem = self.type_of(args[0])
        n = None
        if len(args) > 1:
            v = self.rvalue(args[1])
            n = v.expr.value if isinstance(v, Scalar) and isinstance(v.expr, ir.Const) else None
        if elem.kind in ("texture", "sampler"):
            return Ty("binding_array", elem=elem, n=n)
        if elem.kind == "storage_texture":
            if textures.dims_of(elem) + textures.arrayed(elem) > 2:
                raise Unsupported(node, f"a binding array of {textures.dims_of(elem) + 1}-coordinate storage textures")
            return Ty("binding_array", elem=elem, n=n)
        # Of runtime-sized buffers: an array whose element starts where a function of the index
        # says (exprs.py's indexing).
        return Ty("array", elem=elem, n=n)

    def _struct(self, item: Tree) -> None:
        sname = names(item)[0]
        self.module.structs[sname] = Struct(sname, [])   # its name is a type inside itself
        self.module.structs[sname] = Struct(sname, [(names(m)[0], self.type_of(trees(m)[-1]), attributes(m))
                                                     for m in trees(item, "member")])

    def _workgroup_size_overrides(self) -> None:
        """An override constant sizing the workgroup is that extent: `bdim.x` wherever it is used."""
        for d, arg in zip(DIMS, attributes(self.fn).get("workgroup_size", [])):
            if isinstance(arg, Tree) and arg.data == "name":
                n = str(arg.children[0])
                for g in self.module.globals:
                    if g.data == "global_value" and any(isinstance(t, Token) and t.type == "OVERRIDE"
                                                        for t in g.children) and names(g)[0] == n:
                        self.wg_overrides[n] = f"bdim.{d}"

    def _extents(self) -> None:
        k = self.kernel
        args = attributes(self.fn).get("workgroup_size")
        if not args:
            raise Unsupported(self.fn, "a compute entry point without @workgroup_size")
        for i, d in enumerate(DIMS):
            if i >= len(args):
                k.block_dim[d] = 1
                continue
            v = self.rvalue(args[i])
            if isinstance(v, Scalar) and isinstance(v.expr, ir.Const):
                k.block_dim[d] = v.expr.value
            elif isinstance(v, Scalar) and isinstance(v.expr, (ir.Builtin, ir.Param)):
                k.block_dim[d] = None    # an override constant: the pipeline sets it
            else:
                raise Unsupported(args[i], "a workgroup size that is neither a constant nor an override")
            k.grid_dim[d] = None

    def _global(self, g: Tree) -> None:
        k = self.kernel
        if g.data == "global_value":
            word = next(t for t in g.children if isinstance(t, Token) and t.type in ("CONST", "OVERRIDE"))
            name = names(g)[0]
            init = g.children[-1]
            if name in self.wg_overrides:
                self.scopes[0][name] = Scalar(ir.Builtin(self.wg_overrides[name]), scalar("u32"))
            elif word.type == "OVERRIDE":
                ty_node = g.children[3]
                ty = self.type_of(ty_node) if ty_node is not None else self.rvalue(init).ty
                self.scopes[0][name] = Scalar(ir.Param(name), ty)
                k.params.append(name)
            else:
                self.scopes[0][name] = self.rvalue(init)
            return
        decl = trees(g, "var_decl")[0]
        tmpl = trees(decl, "var_template")
        words = names(tmpl[0]) if tmpl else ["private"]
        space_word = words[0]
        name = names(decl)[0]
        ty_node = next((c for c in decl.children[3:4] if c is not None), None)
        if ty_node is None:
            raise Unsupported(decl, f"module-scope variable '{name}' without a type")
        ty = self.type_of(ty_node)
        structs = self.module.structs
        if ty.kind in ("texture", "sampler", "storage_texture", "binding_array"):
            self.scopes[0][name] = textures.Texture(name, ty)
            st = ty.elem if ty.kind == "binding_array" else ty
            if st.kind == "storage_texture":   # memory: its texels (textures.py); a binding array's as layers
                k.buffers[name] = ir.Buffer(name, ir.GLOBAL, str(st.elem), max(1, (st.n or 4) // textures.channels(st)))
                self.used.add(name)
            return
        if space_word in ("uniform", "immediate", "push_constant") or (space_word == "storage" and ty.kind == "struct"
                                       and self._all_scalar(ty) and "read_write" not in words):
            self.scopes[0][name] = self._uniform(name, ty, decl)
            return
        if space_word in ("storage", "workgroup"):
            space = ir.GLOBAL if space_word == "storage" else ir.SHARED
            elem = ty.scalar()
            esize = size_of(elem, structs) or 4
            size = size_of(ty, structs)
            strides = _strides(ty, structs, esize)
            # A binding starts at its offset 0, and a runtime-sized array's rows keep their
            # declared length (ir.Buffer.declared).
            k.buffers[name] = ir.Buffer(name, space, str(elem), esize, size, strides=strides, declared=True)
            self.used.add(name)
            self.scopes[0][name] = Ref(name, space, ir.Const(0), ty, "read_write" in words or space == ir.SHARED)
            return
        if space_word in ("private", "function"):
            # Per invocation: declared at the start of the entry point.
            self.scopes[0][name] = ("private", decl)
            return
        raise Unsupported(decl, f"address space '{space_word}'")

    def _all_scalar(self, ty: Ty) -> bool:
        return all(m[1].kind == "scalar" for m in self.module.structs[ty.name].members)

    def _uniform(self, name: str, ty: Ty, node) -> object:
        """A uniform value: scalar members are kernel parameters (TVM's PODArgs); other members are
        read from a constant buffer."""
        k = self.kernel
        if ty.kind == "scalar":
            k.params.append(name)
            return Scalar(ir.Param(name), ty)
        structs = self.module.structs
        if ty.kind == "struct":
            members = {}
            for mname, mt, _ in structs[ty.name].members:
                if mt.kind == "scalar":
                    members[mname] = Scalar(ir.Param(mname), mt)
                    if mname not in k.params:
                        k.params.append(mname)
            if len(members) == len(structs[ty.name].members):
                return StructVal(members, ty)
        elem = ty.scalar()
        esize = size_of(elem, structs) or 4
        k.buffers[name] = ir.Buffer(name, ir.CONSTANT, str(elem), esize, size_of(ty, structs), declared=True)
        self.used.add(name)
        return Ref(name, ir.CONSTANT, ir.Const(0), ty, False)

    def _entry_params(self) -> None:
        for p in trees(self.fn, "param"):
            self.scopes[0][names(p)[0]] = self._builtin_input(p, attributes(p), self.type_of(trees(p)[-1]))

    def _builtin_input(self, node, attrs: dict, ty: Ty):
        b = attrs.get("builtin")
        if b is None:
            if ty.kind == "struct":
                return StructVal({m: self._builtin_input(node, a, mt)
                                  for m, mt, a in self.module.structs[ty.name].members}, ty)
            raise Unsupported(node, "an entry-point parameter that is not a builtin")
        u32 = scalar("u32")
        if b in _BUILTIN_VECS:
            comps = tuple(ir.Builtin(f"{_BUILTIN_VECS[b]}.{d}") for d in DIMS)
        elif b == "global_invocation_id":
            comps = tuple(ir.BinOp("+", ir.BinOp("*", ir.Builtin(f"bid.{d}"), ir.Builtin(f"bdim.{d}")),
                                   ir.Builtin(f"tid.{d}")) for d in DIMS)
        elif b in _SUBGROUP_BUILTINS:
            # Subgroups as warps, contiguous in the local index: a stated assumption (subgroups.py).
            return Scalar(subgroups.builtin(self.kernel, _SUBGROUP_BUILTINS[b], "subgroup_size"), u32)
        elif b == "local_invocation_index":
            tx, ty_, tz = (ir.Builtin(f"tid.{d}") for d in DIMS)
            bx, by = ir.Builtin("bdim.x"), ir.Builtin("bdim.y")
            return Scalar(ir.BinOp("+", tx, ir.BinOp("*", bx, ir.BinOp("+", ty_, ir.BinOp("*", by, tz)))), u32)
        else:
            raise Unsupported(node, f"builtin '{b}'")
        if ty.kind == "vec":
            return Vec(comps[:ty.n], ty)
        return Scalar(comps[0], u32)

    def function_body(self, fn: Tree) -> list[ir.Stmt]:
        """The entry point's body, after the module's private variables are declared."""
        pre: list[ir.Stmt] = []
        for name, val in list(self.scopes[0].items()):
            if isinstance(val, tuple) and val[0] == "private":
                pre.extend(self.declare_var(val[1], scope=self.scopes[0]))
        return pre + self.block(trees(fn, "block")[-1])


def _strides(ty: Ty, structs, esize: int) -> tuple[int, ...]:
    """Row strides in elements of nested fixed-size arrays (in-bounds facts for the analysis)."""
    out = []
    t = ty
    while t.kind == "array" and t.elem is not None and t.elem.kind == "array":
        out.append(stride_of(t, structs) // esize)
        t = t.elem
    return tuple(s for s in out if s > 1)


__all__ = ["WgslLowering", "KernelLowering", "Local", "Ref", "Vec"]
