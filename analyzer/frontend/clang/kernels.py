"""The clang lowering of one file: finds the kernels (`__global__`, `__kernel`, Metal `kernel`),
lowers each (once per instantiation a host launch names, for a template) into ir.Kernel with its
parameters, file-scope variables, types and launch facts; a construct it does not model makes that
kernel `unknown` with the reason and place, never the file.
"""

from __future__ import annotations

import itertools
import re

from analyzer import ir
from analyzer.frontend.c_access import AccessLowering
from analyzer.frontend.c_decls import UNSIGNED_RANGES
from analyzer.frontend.c_exprs import ExprLowering
from analyzer.frontend.c_stmts import leftover_goto
from analyzer.frontend.c_tree import Unsupported
from analyzer.frontend.c_values import LocalRef, ParamStruct, Pointer, Scalar, SharedScalar, Vector, array_start
from analyzer.frontend.clang.asm import ClangAsm
from analyzer.frontend.clang.calls import ClangCalls
from analyzer.frontend.clang.chosen import ClangChosen, is_chosen
from analyzer.frontend.clang.cl_images import ClangImages, image_type
from analyzer.frontend.clang.conversions import ClangConversions
from analyzer.frontend.clang.cub import ClangCub
from analyzer.frontend.clang.cursors import (CK, TK, Source, canonical, children, is_pointer, size_of_type, space_of,
                                             span_of, strip, type_name)
from analyzer.frontend.clang.dependent import ClangDependent
from analyzer.frontend.clang.exprs import ClangExprs
from analyzer.frontend.clang.groups import ClangGroups
from analyzer.frontend.clang.instances import ClangInstances, instance_arguments, same_instance
from analyzer.frontend.clang.lanes import ClangLanes
from analyzer.frontend.clang.launches import FunctionArg, explicit_instances, host_launches, launch_bounds, work_group_size
from analyzer.frontend.clang.member_pointers import ClangMemberPointers
from analyzer.frontend.clang.memset import ClangMemset
from analyzer.frontend.clang.metal import ClangMetal
from analyzer.frontend.clang.metal_matrices import ClangMetalMatrices
from analyzer.frontend.clang.methods import ClangMethods
from analyzer.frontend.clang.param_arrays import ClangParamArrays
from analyzer.frontend.clang.pointer_arrays import ClangPointerArrays
from analyzer.frontend.clang.pointer_moves import ClangPointerMoves
from analyzer.frontend.clang.ranges import ClangRanges
from analyzer.frontend.clang.reader import INCLUDE, PARAM_PREFIX, Parsed, evaluate_int, is_float_constant, unary_op
from analyzer.frontend.clang.stmts import ClangStmts
from analyzer.frontend.clang.stores import ClangStores
from analyzer.frontend.clang.struct_copies import ClangStructCopies
from analyzer.frontend.clang.wmma import ClangWmma
from analyzer.frontend.dialects import METAL_SCALAR_ATTRS, metal_position
from analyzer.frontend.types import SCALAR_SIZES, size_of, vector_shape

_INCLUDE = str(INCLUDE)


_FUNCTIONS = (CK.FUNCTION_DECL, CK.FUNCTION_TEMPLATE, CK.CXX_METHOD, CK.CONSTRUCTOR, CK.DESTRUCTOR,
              CK.CONVERSION_FUNCTION)


class ClangLowering(ClangPointerArrays, ClangChosen, ClangExprs, ClangInstances, ClangDependent, ClangStores, ClangAsm, ClangConversions, ClangStmts,
                    ClangCalls, ClangGroups, ClangImages, ClangMetal, ClangMetalMatrices, ClangPointerMoves, ClangMethods,
                    ClangLanes, ClangRanges, ClangWmma, ClangCub, ClangMemset, ClangParamArrays, ClangStructCopies,
                    ClangMemberPointers, AccessLowering, ExprLowering):
    """One file's kernels from clang's AST."""

    def __init__(self, parsed: Parsed):
        self.parsed = parsed
        self.lang = parsed.lang
        self.filename = parsed.filename
        self.lines = parsed.text.splitlines()
        self.source = Source(parsed.filename, _parsed_text(parsed), parsed.rewritten)
        self.warp_size = 1 if self.lang == "opencl" else 32
        self.access_ids = itertools.count(1)
        self.loop_ids = itertools.count(1)
        self.opaque_ids = itertools.count(1)
        self.inline_cache: dict = {}
        self.passed_addresses: dict = {}   # function -> its locals whose address a call is given
        self.type_sizes: dict[str, int] = {}
        self.records: dict[str, object] = {}
        self.template_values: dict = {}
        self.template_types: dict = {}
        self.instantiated = False
        self.kernels: list = []
        self.globals: list = []
        self.function_extents: list[tuple[int, int]] = []   # the main file's functions (and methods)
        self.record_extents: list = []   # the main file's structs and classes: (start, end, cursor)
        self.broken_records: dict = {}   # hash -> name: those clang reported an error in, outside their methods
        self._uses_checked: set = set()
        self.instances: dict = {}   # a Metal template's hash -> the specializations the file instantiates
        self._collect(parsed.tu.cursor)

    # ---------- the file ----------

    def in_headers(self, c) -> bool:
        """Whether a cursor comes from kernelrace's bundled headers or clang's own."""
        f = c.location.file
        if f is None:
            return True
        name = f.name
        return name.startswith(_INCLUDE) or "/clang/" in name and "/include/" in name

    def from_headers(self, call) -> bool:
        ref = call.referenced
        # clang's OpenCL built-ins are declared where they are first called: a function no file defines
        return ref is None or self.in_headers(ref) or ref.get_definition() is None

    def _collect(self, root) -> None:
        stack = list(reversed(children(root)))
        while stack:
            c = stack.pop()
            k = c.kind
            if k in (CK.NAMESPACE, CK.LINKAGE_SPEC, CK.UNEXPOSED_DECL):
                if not self.in_headers(c):
                    stack.extend(reversed(children(c)))
                continue
            if self.in_headers(c):
                continue
            if k in _FUNCTIONS:
                # (a declaration too: an error in its signature changes that function only, and a
                # kernel that calls it reads its definition, whose own errors make that kernel unknown)
                self.function_extents.append((c.extent.start.offset, c.extent.end.offset))
            if k in (CK.STRUCT_DECL, CK.CLASS_DECL, CK.CLASS_TEMPLATE):
                if c.location.file is not None and c.location.file.name == self.filename:
                    self.record_extents.append((c.extent.start.offset, c.extent.end.offset, c))
                stack.extend(reversed([m for m in children(c) if m.kind in _FUNCTIONS and m.kind != CK.FUNCTION_DECL]))
                continue
            if k == CK.STATIC_ASSERT and self.lang == "metal":
                self._instance_marker(c)
            elif k in (CK.FUNCTION_DECL, CK.FUNCTION_TEMPLATE) and c.is_definition() and self._is_kernel(c):
                if self.parsed.own_files is None or c.location.file.name in self.parsed.own_files:
                    self.kernels.append(c)   # (not an includer's kernel)
            elif k == CK.VAR_DECL:
                self.globals.append(c)

    def _is_kernel(self, c) -> bool:
        if self.lang == "cuda":
            return any(k.kind == CK.CUDAGLOBAL_ATTR for k in c.get_children())
        if self.lang == "opencl":
            return "device_kernel" in c.type.spelling or self.source.after(c, 12).lstrip().startswith(
                ("__kernel", "kernel"))
        return any(k.kind == CK.ANNOTATE_ATTR and k.spelling in ("kernelrace_kernel", "kr:kernel")
                   for k in c.get_children())

    def lower(self) -> list[ir.Kernel]:
        out = []
        launches = host_launches(self) if self.lang == "cuda" else {}   # (a header's macro may launch)
        for k in self.kernels:
            tparams = [p for p in k.get_children() if p.kind in (CK.TEMPLATE_NON_TYPE_PARAMETER,
                                                                 CK.TEMPLATE_TYPE_PARAMETER)]
            specs = self.instances.get(k.hash, []) if tparams else []
            found = [tuple(x.targs) for x in launches.get(k.hash, [])] + explicit_instances(self, k) if tparams else []
            runs = [(k, tparams, targs) for targs in (list(dict.fromkeys(found)) if found else [None])]
            kernels = self.lower_runs(k, tparams, runs, launches)
            if specs and any(x.unsupported for x in kernels):
                # the pattern does not read (a member of a dependent type): each instantiation as clang made it
                kernels = self.lower_runs(k, tparams, [(s, [], instance_arguments(s)) for s in specs], launches)
            out.extend(kernels)
        return out

    def span(self, c) -> ir.Span:
        if c is None:
            return ir.Span(self.filename, 0, 0)
        if isinstance(c, ir.Span):
            return c
        return span_of(c, self.filename)

    # ---------- types ----------

    def note_type(self, t) -> str:
        """The IR name of a type, its size remembered; a template's type parameter by its binding
        (4-byte `float` when unbound, as the Lark path)."""
        ct = canonical(t)
        if ct.kind in (TK.POINTER, TK.LVALUEREFERENCE, TK.RVALUEREFERENCE):
            return self.note_type(ct.get_pointee())
        if ct.kind in (TK.CONSTANTARRAY, TK.INCOMPLETEARRAY, TK.DEPENDENTSIZEDARRAY, TK.VARIABLEARRAY):
            return self.note_type(ct.element_type if ct.kind != TK.DEPENDENTSIZEDARRAY else ct.get_array_element_type())
        if ct.kind == TK.UNEXPOSED and re.sub(r"\b(const|volatile)\b", "", ct.spelling).strip() == "__bf16":
            return "bfloat"   # (the bindings have no kind for clang's __bf16: cuda_bf16.h's __nv_bfloat16)
        if "type-parameter" in ct.spelling or ct.kind in (TK.UNEXPOSED, TK.DEPENDENT):
            name = re.sub(r"\b(const|volatile)\b|[*&]", "", t.spelling).strip()
            return self.template_types.get(name, "float")
        name = type_name(ct)
        if ct.kind == TK.RECORD and not vector_shape(name) and name not in SCALAR_SIZES:
            # (cuRAND's states are opaque per-thread data of a size, as on the Lark path)
            self.records.setdefault(name, ct)
        if name not in self.type_sizes:
            n = size_of_type(ct)
            if n:
                self.type_sizes[name] = n
        return name

    def size(self, name: str) -> int | None:
        return self.type_sizes.get(name) or size_of(name)

    def _is_struct(self, name: str) -> bool:
        return name in self.records and not vector_shape(name)

    def struct_names(self):
        return self.records

    def elem_size(self, ty: str) -> int | None:
        return self.size(ty)

    def make_access(self, ptr: Pointer, is_write: bool, span, atomic=False) -> ir.Access:
        if ptr.buffer == "?":
            raise Unsupported(None, "access through a pointer of unknown origin")
        if is_chosen(ptr.buffer):   # (load and _access_stmt take one apart; this access is made another way)
            raise Unsupported(None, "this access through a pointer chosen between two buffers")
        buf = self.kernel.buffers[ptr.buffer]
        width = self.size(ptr.elem) or buf.elem_size
        view = str(ptr.elem) if str(ptr.elem) != buf.elem_type and self.size(ptr.elem) else ""
        return ir.Access(ptr.buffer, ptr.space, ptr.offset, width, is_write, span, elem_size=buf.elem_size,
                         atomic=atomic, id=next(self.access_ids), view=view, bounds=ptr.access_bounds())

    def fresh_var(self, name: str) -> str:
        n = self.var_counts.get(name, 0)
        self.var_counts[name] = n + 1
        return name if n == 0 else f"{name}#{n}"

    def file_scope_error(self) -> str | None:
        """The first error clang reports in the main file outside every function definition (a
        preprocessor error, a broken declaration), or None: errors inside host functions are the
        host's business."""
        for file, offset, line, col, msg, _ in self.parsed.placed:
            if file == self.filename and not any(a <= offset <= b for a, b in self.function_extents):
                record = min(((b - a, r) for a, b, r in self.record_extents if a <= offset <= b), default=None,
                             key=lambda x: x[0])
                if record is None:
                    return f"{file}:{line}:{col}: {msg}"
                # a class clang could not read whole (a base of a header not found): a kernel that
                # uses it is unknown (check_errors); the others do not depend on it
                self.broken_records[record[1].hash] = record[1].spelling
        return None

    def check_errors(self, fn) -> None:
        """A function clang reported an error in is not read: clang may have dropped what it could
        not make sense of, and what was dropped would go unchecked. Its kernel is unknown."""
        start, end = fn.extent.start, fn.extent.end
        if start.file is None:
            return
        for file, offset, line, col, msg, instance in self.parsed.placed:
            if file == start.file.name and start.offset <= offset <= end.offset:
                if self.instantiated and instance and not same_instance(instance, self.kernel.name):
                    continue   # an error in another instantiation of the same template
                if self.pattern is not None and (instance.startswith(self.pattern + "<") or (
                        fn.kind == CK.FUNCTION_TEMPLATE and re.match(rf"(?:.*::)?{re.escape(fn.spelling)}<", instance))):
                    # an error in one instantiation of the kernel template, or of a helper template, both
                    # read as their patterns (`axpby<complex64_t>`, `load_unsafe<complex64_t, ...>`, where
                    # our prelude's address spaces refuse a struct copy Metal allows): the pattern's own
                    # AST, which is what is read, has no error
                    continue
                raise Unsupported(ir.Span(file, line, col), f"clang: {msg}")
        if self.broken_records and fn.hash not in self._uses_checked:
            self._uses_broken_record(fn)
            self._uses_checked.add(fn.hash)

    def _uses_broken_record(self, fn) -> None:
        """A function that names a class clang reported an error in (its type, a member, a
        method) is not read: what clang dropped from the class could change what it does."""
        for n in fn.walk_preorder():
            for d in (n.referenced, n.referenced.semantic_parent if n.referenced is not None else None,
                      n.type.get_declaration() if n.kind.is_expression() or n.kind.is_declaration() else None):
                if d is not None and d.hash in self.broken_records:
                    span = self.span(n)
                    raise Unsupported(span, f"clang: an error in the declaration of '{self.broken_records[d.hash]}'")

    def int_value(self, c) -> int | None:
        if self.mentions_symbol(c):
            return None
        return evaluate_int(c)

    def mentions_symbol(self, c) -> bool:
        """Whether an expression refers to a symbolic value: a missing macro's parameter or a
        template's non-type parameter."""
        for n in c.walk_preorder():
            if n.kind == CK.DECL_REF_EXPR:
                r = n.referenced
                if r is not None and (r.kind == CK.TEMPLATE_NON_TYPE_PARAMETER or r.spelling.startswith(PARAM_PREFIX)):
                    return True
        return False

    # ---------- one kernel ----------

    def lower_kernel(self, fn, tparams, targs) -> ir.Kernel:
        name = _qualified(fn)
        if targs is not None:
            name += "<" + ", ".join(str(a) for a in targs) + ">"
        self.kernel = ir.Kernel(name=name, file=self.filename, lang=self.lang, body=[], buffers={}, params=[],
                                warp_size=self.warp_size, source_lines=self.lines)
        self.scopes: list[dict] = [{}]
        self.after_goto = False   # a goto lowered: a later pointer move may be one it skips
        self.var_counts: dict[str, int] = {}
        self.inline_depth = 0
        # a Metal kernel template read as its pattern: what clang reports only while instantiating it
        # (for one type argument) leaves the pattern's AST whole (see check_errors)
        self.pattern = fn.spelling if tparams and self.lang == "metal" else None
        self.nesting = 0
        self.pending: list[ir.Stmt] = []
        self.return_var = None
        self.return_struct = None
        self.template_values, self.template_types, self.template_params = {}, {}, [t.spelling for t in tparams]
        self.template_functions = {}   # a template parameter -> the function a launch gives it
        # a specialization clang instantiated (reader.instance_markers): its body and its callees' are
        # clang's instantiations, types and constants resolved
        self.instantiated = fn.kind == CK.FUNCTION_DECL and fn.specialized_template is not None
        self.async_copies = {"spans": [], "waits": False}
        self.dynamic_shared = None   # the buffer every `extern __shared__` array of the kernel names
        for i, tp in enumerate(tparams):
            arg = targs[i] if targs is not None and i < len(targs) else None
            if tp.kind == CK.TEMPLATE_NON_TYPE_PARAMETER and isinstance(arg, FunctionArg):
                self.template_functions[tp.spelling] = arg.cursor
            elif tp.kind == CK.TEMPLATE_NON_TYPE_PARAMETER:
                if isinstance(arg, int):
                    self.template_values[tp.spelling] = Scalar(ir.Const(arg), "int")
                else:
                    self.kernel.params.append(tp.spelling)
                    self.param_range(tp.spelling, type_name(tp.type))   # (`template <bool FWD>`: 0 or 1)
                    self.template_values[tp.spelling] = Scalar(ir.Param(tp.spelling), "int")
            else:
                self.template_types[tp.spelling] = arg if isinstance(arg, str) else "float"
        self._declare_globals()
        self.param_pointers.clear()   # (another kernel's struct argument of the same name is not this one's)
        body = next((k for k in fn.get_children() if k.kind == CK.COMPOUND_STMT), None)
        assigned = _assigned_params(body) if body is not None else set()
        prologue: list[ir.Stmt] = []
        for p in fn.get_children():
            if p.kind == CK.PARM_DECL:
                self._declare_param(p)
                val = self.scopes[0].get(p.hash)
                if p.hash in assigned and isinstance(val, (Scalar, Vector)):
                    # a scalar parameter the kernel assigns: a local variable that starts as the argument
                    local = LocalRef(self.fresh_var(p.spelling), val.ty)
                    prologue.extend(self._assign_local(local, val, self.span(p)))
                    self.scopes[0][p.hash] = local
        bounds = launch_bounds(self, fn)
        if bounds is not None:
            self.kernel.max_threads_per_block = bounds
        if self.lang == "opencl":
            wg = work_group_size(self, fn)
            if wg is not None:
                self.kernel.block_dim = {d: v if isinstance(v, int) else None for d, v in zip("xyz", wg)}
                for d, v in zip("xyz", wg):
                    if isinstance(v, str):   # a build macro, a symbolic parameter: the extent is its value
                        if v not in self.kernel.params:
                            self.kernel.params.append(v)
                        self.kernel.assumptions.append((f"blockDim.{d} = {v}, from reqd_work_group_size",
                                                        ir.BinOp("==", ir.Builtin(f"bdim.{d}"), ir.Param(v))))
        if body is None:
            raise Unsupported(fn, "kernel without a body")
        self.check_errors(fn)
        self.kernel.body = prologue + self.block(body)
        self.check_async_copies(fn)
        goto = leftover_goto(self.kernel.body)
        if goto is not None:
            raise Unsupported(goto.node, f"goto {goto.label} (to an earlier label, into a block or out of a loop)")
        return self.kernel

    def bind_template(self, fn, ref) -> None:
        """A function template's parameters bound to an instantiation's arguments."""
        if ref is None or fn.kind != CK.FUNCTION_TEMPLATE:
            return
        tparams = [p for p in fn.get_children() if p.kind in (CK.TEMPLATE_NON_TYPE_PARAMETER,
                                                              CK.TEMPLATE_TYPE_PARAMETER)]
        n = ref.get_num_template_arguments()
        for i, tp in enumerate(tparams):
            if i >= n:
                break
            kind = ref.get_template_argument_kind(i).name
            if tp.kind == CK.TEMPLATE_NON_TYPE_PARAMETER and kind == "INTEGRAL":
                self.template_values[tp.spelling] = Scalar(ir.Const(ref.get_template_argument_value(i)), "int")
            elif tp.kind == CK.TEMPLATE_TYPE_PARAMETER and kind == "TYPE":
                self.template_types[tp.spelling] = self.note_type(ref.get_template_argument_type(i))

    def _declare_param(self, p) -> None:
        name = p.spelling
        t = canonical(p.type)
        if not name:
            return
        if self.lang == "metal":
            bound = self._metal_param(p, name, t)
            if bound is not None:
                self.scopes[0][p.hash] = bound
                return
        img = image_type(t.spelling) if self.lang == "opencl" else None
        if img is not None:
            self.scopes[0][p.hash] = self.declare_image(name, *img)
            return
        if t.kind == TK.POINTER:
            pointee = t.get_pointee()
            elem = self.note_type(pointee)
            space = space_of(pointee) or ir.GLOBAL
            if space == ir.PRIVATE:
                space = ir.GLOBAL
            # An OpenCL buffer argument is a cl_mem's start (ir.Buffer.declared).
            self.kernel.buffers[name] = ir.Buffer(name, space, elem, self.size(elem) or 4,
                                                  declared=self.lang == "opencl" and space in (ir.GLOBAL, ir.CONSTANT))
            self.scopes[0][p.hash] = Pointer(name, space, elem, ir.Const(0))
            return
        if t.kind == TK.RECORD and not vector_shape(type_name(t)):
            self.scopes[0][p.hash] = ParamStruct(name)
            self.declare_param_members(name, t, p.type.is_const_qualified())
            return
        ty = self.note_type(t)
        shape = vector_shape(ty)
        if shape:
            # a vector passed by value (OpenCL's `int2 shape`, CUDA's `float4 v`): one parameter a lane
            lanes = tuple(f"{name}.{'xyzw'[i] if shape[1] <= 4 else f's{i:x}'}" for i in range(shape[1]))
            for lane in lanes:
                self.kernel.params.append(lane)
                self.param_range(lane, shape[0])
            self.scopes[0][p.hash] = Vector(tuple(ir.Param(lane) for lane in lanes), ty)
            return
        self.kernel.params.append(name)
        self.scopes[0][p.hash] = Scalar(ir.Param(name), ty)
        self.param_range(name, ty)

    def _metal_param(self, p, name, t):
        attrs = [k.spelling[3:] for k in p.get_children() if k.kind == CK.ANNOTATE_ATTR and k.spelling.startswith("kr:")]
        ty = type_name(t)
        for attr in attrs:
            shape = vector_shape(ty)
            lanes = metal_position(attr, shape[1] if shape else 1)
            if lanes is not None:
                if shape and shape[1] > 3:
                    raise Unsupported(p, f"[[{attr}]] on a {ty}")
                # (integer conversions are the identity in the IR, as on the Lark path: ushort2 too)
                return Vector(lanes, ty) if shape else Scalar(lanes[0], "uint")
            if attr in METAL_SCALAR_ATTRS:
                return Scalar(METAL_SCALAR_ATTRS[attr], "uint")
            if attr == "grid_origin":
                # where the dispatch's grid starts: the same for every thread, its value the host's
                names = [f"{name}_{d}" for d in "xyz"[:shape[1]]] if shape else [name]
                self.kernel.params.extend(names)
                for n in names:
                    self.kernel.param_ranges[n] = UNSIGNED_RANGES["uint"]
                lanes = tuple(ir.Param(n) for n in names)
                return Vector(lanes, ty) if shape else Scalar(lanes[0], "uint")
            if attr in ("buffer", "threadgroup", "texture", "sampler", "function_constant"):
                # (an argument that exists only when a function constant holds: read as always there)
                continue
            raise Unsupported(p, f"attribute [[{attr}]]")
        if t.kind == TK.LVALUEREFERENCE and space_of(t.get_pointee()) in (ir.GLOBAL, ir.SHARED) and \
                canonical(t.get_pointee()).kind == TK.RECORD:
            # `device Buf &b [[buffer(0)]]` (SPIRV-Cross's output): the struct in memory, as a pointer to it
            elem = self.note_type(t.get_pointee())
            space = space_of(t.get_pointee())
            self.kernel.buffers[name] = ir.Buffer(name, space, elem, self.size(elem) or 4)
            return Pointer(name, space, elem, ir.Const(0))
        if t.kind == TK.LVALUEREFERENCE and space_of(t.get_pointee()) == ir.CONSTANT:
            inner = canonical(t.get_pointee())
            if inner.kind != TK.RECORD:
                ty = self.note_type(inner)
                self.kernel.params.append(name)
                self.param_range(name, ty)   # `constant bool &flag`, `constant ulong &n`
                return Scalar(ir.Param(name), ty)
            return ParamStruct(name)
        return None

    def _declare_globals(self) -> None:
        """File-scope variables are declared where a kernel first names them (global_var)."""
        self.global_values: dict = {}

    def global_var(self, ref, c):
        """A file-scope variable a kernel names: a shared array or scalar (one per block), device or
        constant memory (one per grid), or a constant number."""
        key = ref.hash
        if key in self.global_values:
            return self.global_values[key]
        val = self._global(ref, c)
        self.global_values[key] = val
        return val

    def _global(self, ref, c):
        t = canonical(ref.type)
        attrs = {k.kind for k in ref.get_children()}
        shared = CK.CUDASHARED_ATTR in attrs or space_of(ref.type) == ir.SHARED
        constant_attr = CK.CUDACONSTANT_ATTR in attrs if hasattr(CK, "CUDACONSTANT_ATTR") else False
        device = CK.CUDADEVICE_ATTR in attrs if hasattr(CK, "CUDADEVICE_ATTR") else False
        spelled = self.source.text(ref)
        is_const = ref.type.is_const_qualified() or "constexpr" in spelled.split("=")[0].split() or (
            # Metal's program-scope `constant` and OpenCL's `__constant` variables cannot change
            self.lang in ("metal", "opencl") and space_of(ref.type) == ir.CONSTANT)
        if self.lang == "metal" and any(k.kind == CK.ANNOTATE_ATTR and k.spelling == "kr:function_constant"
                                        for k in ref.get_children()):
            # `constant bool has_mask [[function_constant(20)]]`: set by the host when it builds the
            # pipeline, the same for every thread: a symbolic parameter
            if ref.spelling not in self.kernel.params:
                self.kernel.params.append(ref.spelling)
                self.param_range(ref.spelling, self.note_type(t))   # (a bool one is 0 or 1)
            return Scalar(ir.Param(ref.spelling), self.note_type(t))
        if is_const and t.kind not in (TK.CONSTANTARRAY, TK.INCOMPLETEARRAY) and not shared:
            init = [k for k in ref.get_children() if k.kind.is_expression()]
            if init:
                n = self.int_value(init[-1])
                if n is not None:
                    return Scalar(ir.Const(n), "int")
                if is_float_constant(init[-1]) and not self.mentions_symbol(init[-1]):
                    # `constexpr float F8_MAX = 448.0f;`: device code reads the constant itself
                    return self.rvalue(init[-1])
        if self.lang == "cuda" and "__constant__" in spelled.split("=")[0]:
            constant_attr = True
        if self.lang == "cuda" and "__device__" in spelled.split("=")[0] or "__managed__" in spelled.split("=")[0]:
            device = True
        space = ir.SHARED if shared else ir.CONSTANT if constant_attr or space_of(ref.type) == ir.CONSTANT else \
            ir.GLOBAL if device or space_of(ref.type) == ir.GLOBAL else None
        if space is None and self.lang == "cuda" and type_name(t).startswith("texture"):
            # a texture reference: what a fetch through it gives is a value of its arguments
            return Scalar(ir.Call(f"texture:{ref.spelling}", ()), "int")
        if space is None:
            raise Unsupported(c, f"'{ref.spelling}', a file-scope variable of the host")
        elem = self.note_type(t)
        elem_size = self.size(elem) or 4
        bname = self.fresh_var(ref.spelling)
        if t.kind in (TK.CONSTANTARRAY, TK.INCOMPLETEARRAY):
            extents = []
            tt = t
            while tt.kind in (TK.CONSTANTARRAY, TK.INCOMPLETEARRAY):
                extents.append(tt.element_count if tt.kind == TK.CONSTANTARRAY else None)
                tt = canonical(tt.element_type)
            total = elem_size
            for n in extents:
                total = total * n if total is not None and n is not None else None
            self.kernel.buffers[bname] = ir.Buffer(bname, space, elem, elem_size, size_bytes=total)
            return array_start(bname, space, elem, extents)
        self.kernel.buffers[bname] = ir.Buffer(bname, space, elem, elem_size, size_bytes=elem_size)
        return SharedScalar(Pointer(bname, space, elem, ir.Const(0)))


def _assigned_params(body) -> set:
    """The parameters (their cursors' hashes) a function body assigns, increments or decrements."""
    out = set()
    for n in body.walk_preorder():
        target = None
        if n.kind in (CK.BINARY_OPERATOR, CK.COMPOUND_ASSIGNMENT_OPERATOR):
            if n.kind == CK.COMPOUND_ASSIGNMENT_OPERATOR or n.binary_operator.name == "Assign":
                target = next(iter(n.get_children()), None)
        elif n.kind == CK.UNARY_OPERATOR and unary_op(n) in ("pre++", "pre--", "post++", "post--"):
            target = next(iter(n.get_children()), None)
        if target is None:
            continue
        target = strip(target)
        while target.kind in (CK.MEMBER_REF_EXPR, CK.UNEXPOSED_EXPR, CK.ARRAY_SUBSCRIPT_EXPR) and \
                children(target) and not is_pointer(strip(children(target)[0]).type):
            target = strip(children(target)[0])   # `v.x = ...`, `v[0] = ...` of a vector parameter
        if target.kind == CK.DECL_REF_EXPR and target.referenced is not None and \
                target.referenced.kind == CK.PARM_DECL:
            out.add(target.referenced.hash)
    return out


def _qualified(fn) -> str:
    parts = [fn.spelling]
    p = fn.semantic_parent
    while p is not None and p.kind == CK.NAMESPACE:
        if p.spelling:
            parts.append(p.spelling)
        p = p.semantic_parent
    return "::".join(reversed(parts))


def _parsed_text(parsed: Parsed) -> str:
    if parsed.lang == "metal":
        from analyzer.frontend.clang.reader import metal_attributes
        return metal_attributes(parsed.text)[0]
    return parsed.text
