"""Calls in the clang lowering: the dialects' builtins (work-item functions, barriers, atomics,
shuffles, cooperative groups, conversions) and device functions, inlined where they touch memory,
synchronise or read thread state, otherwise uninterpreted functions of their arguments.

The builtin tables and their lowering are the Lark path's (dialects.py, opencl.py): their methods
are called on this lowering, which offers the same helpers (`rvalue`, `make_access`, `pending`).
"""

from __future__ import annotations

from dataclasses import replace

from analyzer import ir
from analyzer.frontend.c_calls import VERIFIER_ANNOTATIONS, _has_return
from analyzer.frontend.c_stmts import jumps_to_flag, returns_out_of_loops
from analyzer.frontend.c_tree import Unsupported
from analyzer.frontend.c_values import _add, Group, LocalRef, LocalStruct, ParamStruct, Pointer, Scalar, SharedScalar, Value, Vector
from analyzer.frontend.clang.cl_images import Image, image_type
from analyzer.frontend.clang.cursors import CK, TK, canonical, children, strip, type_name
from analyzer.frontend.clang.dependent import holds_no_pointer
from analyzer.frontend.clang.metal import SIMDGROUP_OPS
from analyzer.frontend.clang.reader import METAL_VECTOR_CTORS, unary_op
from analyzer.frontend.dialects import _MEM_FLAGS, CudaLowering, MetalLowering
from analyzer.frontend.opencl import OpenClLowering
from analyzer.frontend.types import vector_shape

_BOTH = frozenset({ir.SHARED, ir.GLOBAL})
_CACHED_LOADS = frozenset({"__ldg", "__ldca", "__ldcg", "__ldcs", "__ldlu", "__ldcv"})
_CUDA_BUILTINS = {"threadIdx": "tid", "blockIdx": "bid", "blockDim": "bdim", "gridDim": "gdim"}
_THREAD_STATE = frozenset(_CUDA_BUILTINS) | {"get_local_id", "get_group_id", "get_global_id", "get_local_linear_id",
                                             "get_local_size", "get_num_groups", "get_global_size"}


class ClangCalls:
    """Builtins and device functions; mixed into ClangLowering."""

    def builtin_name(self, name: str, ref) -> Value | None:
        if self.lang == "cuda":
            if name in _CUDA_BUILTINS:
                return self._builtin_vec(_CUDA_BUILTINS[name])
            if name == "warpSize":
                return Scalar(ir.Const(32))
        return None

    def _builtin_vec(self, prefix):
        from analyzer.frontend.c_values import BuiltinVec
        return BuiltinVec(prefix)

    def call(self, c, into=None) -> Value:
        fn = c.spelling
        args = list(c.get_arguments())
        ref = _bound_callee(self, c)
        kids = children(c)
        bindings = None
        if self.lang == "metal" and kids and strip(kids[0]).spelling in METAL_VECTOR_CTORS:
            return self._vector_of(c, METAL_VECTOR_CTORS[strip(kids[0]).spelling], [self.rvalue(a) for a in args])
        if self.lang == "metal":
            matrix = self.matrix_call(c, fn, args)
            if matrix is not None:
                return matrix
        if self.lang == "metal" and (fn in SIMDGROUP_OPS or fn.startswith("operator")) and \
                "simdgroup_matrix" in canonical(c.type).spelling + " ".join(canonical(a.type).spelling for a in args):
            return self._simdgroup(fn, args, c, into)
        if self.lang == "metal" and fn == "thread_elements" and ref is not None and self.in_headers(ref):
            return self.thread_elements(c)
        if self.lang == "cuda":
            wmma = self.wmma_call(c, fn, ref, kids, args)
            if wmma is not None:
                return self._wmma(*wmma, c)
            collective = self.cub_call(c, kids)
            if collective is not None:
                return collective
        if ref is None and len(kids) in (2, 3):
            # an operator on operands of a dependent type (`bidn * THREADS_PER_ROW` where bidn's type is
            # a template's): clang leaves a call of `operator*` unresolved
            op = self.dependent_operator(c, kids)
            if op is not None:
                return op
        if ref is None and not fn and not args and kids and c.kind == CK.CALL_EXPR and \
                self.source.text(c).split("(", 1)[0].strip() in (c.type.spelling, type_name(c.type)):
            return self.unresolved_construct(c, kids)
        if ref is None and kids:
            # a call inside a template whose arguments are dependent: clang leaves it unresolved
            resolved = self.unresolved_callee(c, kids)
            if resolved is not None:
                fn, args, ref, bindings = resolved
            elif c.kind == CK.CALL_EXPR and not args and len(kids) > 1 and strip(kids[0]).kind == CK.DECL_REF_EXPR \
                    and strip(kids[0]).referenced is not None and strip(kids[0]).referenced.kind in (CK.VAR_DECL,
                                                                                                  CK.PARM_DECL):
                # a call of an object of a dependent type (`index(i, p)`, a functor): clang gives no
                # arguments, its operands are the children after the callee (never dropped: a pointer
                # among them makes the call unknown below)
                args = kids[1:]
                fn = fn or strip(kids[0]).spelling
        method = self.method_call(c, into) if ref is None or ref.kind == CK.CXX_METHOD else None
        if method is not None:
            return method
        if fn == "operator[]" and len(args) == 2 and ref is not None and ref.kind == CK.CXX_METHOD:
            arr = self.library_array_call(self.rvalue(args[0]), args[0], fn, args[1:], c)   # `shape[i]`
            if arr is not None:
                return arr
        library = self.library_stmt(fn, args, c)   # memcpy, __stcs inside an expression
        if library is not None:
            self.pending.extend(library)
            return Scalar(ir.Const(0), "int")
        if fn in ("__kernelrace_assert",) or fn in VERIFIER_ANNOTATIONS:
            return Scalar(ir.Const(1), "int")   # claims of earlier verifiers: neither evaluated nor used
        if fn in self.parsed.functions:
            raise Unsupported(c, f"'{fn}', a function no file found declares (its effects are unknown)")
        # a member call: `g.sync()`, `tile.shfl_down(v, 1)`, `s.method()`
        callee = strip(kids[0]) if kids else None
        if callee is not None and callee.kind == CK.MEMBER_REF_EXPR and not _free_operator(ref, fn):
            obj_kids = children(callee)
            obj = self.rvalue(obj_kids[0]) if obj_kids else None
            if isinstance(obj, Group):
                return self._group_call(obj, fn, args, c)
            arr = self.library_array_call(obj, obj_kids[0], fn, args, c) if obj_kids else None
            if arr is not None:
                return arr
            if self.lang == "metal" and obj_kids and type_name(canonical(obj_kids[0].type)).startswith(
                    ("texture", "depth")):
                return self._metal_texture(obj_kids[0], fn, args, c)
            raise Unsupported(c, f"call of member function '{fn}'")
        if ref is not None and ref.kind == CK.CONSTRUCTOR or (c.kind == CK.CALL_EXPR and ref is None and fn and
                                                              vector_shape(fn)):
            return self._construct(c, fn, args)
        if self.barrier(fn, c, args) is not None:
            raise Unsupported(c, f"barrier '{fn}' inside an expression")
        if self.lang == "cuda" and fn in ("reduce", "inclusive_scan", "exclusive_scan") and len(args) == 3 and \
                (self.group_type(args[0].type) or "type-parameter" in canonical(args[0].type).spelling) and \
                self.from_headers(c):   # (a group of a template's type: `Group &g`; not one, unknown)
            return self._group_collective(fn, args, c)
        group = self._group(fn, args, c)
        if group is not None:
            return group
        if self.lang == "opencl" and self.from_headers(c):
            image = self.image_call(fn, args, c)
            if image is not None:
                return image
        special = self.call_value(fn, args, c)
        if special is not None:
            return special
        if fn.startswith("surf") and self.lang == "cuda" and self.from_headers(c):
            raise Unsupported(c, f"'{fn}': surface memory is not modelled")
        if fn.startswith("make_") and vector_shape(fn[5:]) and (self.from_headers(c) or len(args) == vector_shape(
                fn[5:])[1]):   # (a user's make_half4(x, y, z, w) builds the same; make_float4(s) is the user's)
            comps = tuple(self._scalar(self.rvalue(a)) for a in args)
            if len(comps) != vector_shape(fn[5:])[1]:
                raise Unsupported(c, f"{fn} with {len(comps)} values")
            return Vector(comps, fn[5:])
        body = self.user_function(ref)
        if body is not None:
            self.check_errors(body)   # what clang dropped from it could be what makes it touch memory
        if body is not None and bindings is not None:
            return self.inline(body, None, args, c, into, bindings)
        if body is not None and self.should_inline(body):
            return self.inline(body, ref, args, c, into)
        vals = [self.rvalue(a) for a in args]
        if any(isinstance(v, Pointer) for v in vals):
            if self.lang == "metal" and fn and body is None and holds_no_pointer(kids) and all(
                    v.space == ir.CONSTANT for v in vals if isinstance(v, Pointer)):
                return self.reader_of_constants(fn, vals, c)
            raise Unsupported(c, f"call of '{fn}' with a pointer argument")
        if ref is not None and canonical(ref.result_type).kind == TK.RECORD and not vector_shape(
                self.note_type(ref.result_type)) and body is not None:
            return self.inline(body, ref, args, c, into)
        ty = "float" if any(isinstance(v, Scalar) and self._is_float(v.ty) for v in vals) else "int"
        return Scalar(ir.Call(fn, tuple(self._scalar(v) for v in vals)), ty)

    def _construct(self, c, fn, args) -> Value:
        ty = self.note_type(c.type)
        vals = [self.rvalue(a) for a in args]
        if vector_shape(ty):
            return self._vector_of(c, ty, vals)
        if len(vals) == 1 and isinstance(vals[0], (Group, ParamStruct)):
            return vals[0]   # a copy (a cooperative group passed by value; a struct argument, never assigned)
        if len(vals) == 1:
            return self._convert(vals[0], ty)
        return Scalar(ir.Call("ctor:" + ty, tuple(self._scalar(v) for v in vals)), ty)

    # ---------- statements that are calls ----------

    def call_stmt(self, c) -> list[ir.Stmt] | None:
        fn = c.spelling
        if fn in self.parsed.functions and fn not in VERIFIER_ANNOTATIONS:
            raise Unsupported(c, f"'{fn}', a function no file found declares (its effects are unknown)")
        args = list(c.get_arguments())
        kids = children(c)
        callee = strip(kids[0]) if kids else None
        if callee is not None and callee.kind == CK.MEMBER_REF_EXPR and fn == "sync" and not args:
            obj = self.rvalue(children(callee)[0])
            if isinstance(obj, Group):
                return [self.group_barrier(obj, c)]
        if fn == "sync" and len(args) == 1:
            obj = self.rvalue(args[0])
            if isinstance(obj, Group):
                return [self.group_barrier(obj, c)]
        barrier = self.barrier(fn, c, args)
        if barrier is not None:
            return [barrier]
        if self.lang == "cuda" and fn.startswith("surf") and self.from_headers(c):
            raise Unsupported(c, f"'{fn}': surface memory is not modelled")
        library = self.library_stmt(fn, args, c)
        if library is not None:
            return library
        if self.lang == "cuda":
            if fn == "__threadfence_block":
                return []
            if fn in ir.FENCES:
                return [ir.Eval(ir.Call(fn, ()), self.span(c))]
        if self.lang == "opencl":
            if fn in ("mem_fence", "read_mem_fence", "write_mem_fence", "atomic_work_item_fence"):
                return []
            m = _vstore(fn)
            if m is not None:
                return self._vstore_call(fn, m, args, c)
        if self.lang == "metal" and fn == "atomic_thread_fence":
            return []
        return None

    def barrier(self, fn, c, args) -> ir.Barrier | None:
        span = self.span(c)
        if self.lang == "cuda":
            if fn == "__syncthreads" and self.from_headers(c):
                return ir.Barrier(ir.BLOCK, _BOTH, span, "__syncthreads()")
            if fn == "__syncwarp" and self.from_headers(c):
                return ir.Barrier(ir.WARP, _BOTH, span, "__syncwarp()")
            return None
        if self.lang == "metal":
            if fn in ("threadgroup_barrier", "simdgroup_barrier") and self.from_headers(c):
                words = set(self.source.text(c).replace("::", " ").replace("|", " ").replace("(", " ")
                            .replace(")", " ").replace(",", " ").split())
                flags = [w for w in words if w in _MEM_FLAGS]
                spaces = frozenset().union(*(_MEM_FLAGS[f] for f in flags)) if flags else _BOTH
                scope = ir.BLOCK if fn == "threadgroup_barrier" else ir.WARP
                return ir.Barrier(scope, spaces, span, self.call_text(c))
            return None
        if self.lang == "opencl":
            if fn in ("barrier", "work_group_barrier", "sub_group_barrier"):
                spaces = OpenClLowering._flags(self, args)
                if len(args) > 1 and {"memory_scope_work_item", "memory_scope_sub_group"} & set(
                        self.source.text(args[1]).split()):
                    spaces = frozenset()
                scope = ir.WARP if fn == "sub_group_barrier" else ir.BLOCK
                return ir.Barrier(scope, spaces, span, self.call_text(c))
        return None

    def call_text(self, c) -> str:
        return " ".join(self.source.text(c).split())

    def call_value(self, fn, args, c) -> Value | None:
        if not self.from_headers(c):
            return None
        if self.lang == "cuda":
            if fn.startswith("curand"):
                return self._curand(fn, args, c)
            if fn == "__cvta_generic_to_shared":
                return self.shared_address(args, c)
            if fn in _CACHED_LOADS and len(args) == 1:
                ptr = self.rvalue(args[0])   # __ldg(&p[i]): a read of p[i] through another cache
                if isinstance(ptr, Pointer):
                    return self.load(ptr, self.span(c))
            return CudaLowering.call_value(self, fn, args, c)
        if self.lang == "metal":
            if fn.startswith("__metal_simd_"):
                fn = fn[len("__metal_"):]   # the compiler's builtin under a library's wrapper
            if fn in ("any", "all") and len(args) == 1:
                return self._any_all(fn, args[0])
            if fn == "sincos" and len(args) == 2:
                return self._sincos(args, c)
            if fn == "__metal_get_simdgroup_size":
                return Scalar(ir.Const(32), "uint")
            if fn == "as_type":
                return Scalar(ir.Call(f"as_type<{self.note_type(c.type)}>", tuple(
                    self._scalar(self.rvalue(a)) for a in args)), self.note_type(c.type))
            return MetalLowering.call_value(self, fn, args, c)
        if self.lang == "opencl":
            return OpenClLowering.call_value(self, fn, args, c)
        return None

    # the Lark path's helpers that its dialect methods call on `self`
    def _work_item(self, fn, args, node):
        return OpenClLowering._work_item(self, fn, args, node)

    def _dim_value(self, what, d):
        return OpenClLowering._dim_value(what, d)

    def _args(self, fn, args, n, node):
        return OpenClLowering._args(fn, args, n, node)

    def _select(self, args):
        return OpenClLowering._select(self, args)

    def _vector_pointer(self, fn, m, offset_node, ptr_node, node):
        return OpenClLowering._vector_pointer(self, fn, m, offset_node, ptr_node, node)

    def _vload(self, fn, m, args, node):
        return OpenClLowering._vload(self, fn, m, args, node)

    def _atomic(self, fn, kind_, args, node):
        return OpenClLowering._atomic(self, fn, kind_, args, node)

    def _metal_atomic(self, fn, args, node):
        return MetalLowering._metal_atomic(self, fn, args, node)

    def _sync_reduce(self, fn, args, node):
        return CudaLowering._sync_reduce(self, fn, args, node)

    def _vstore_call(self, fn, m, args, c):
        val_n, off_n, ptr_n = OpenClLowering._args(fn, args, 3, c)
        val = self.rvalue(val_n)
        ptr, _ = OpenClLowering._vector_pointer(self, fn, m, off_n, ptr_n, c)
        shape = vector_shape(ptr.elem)
        if shape:
            val = Vector(self._components(val, shape[1]), ptr.elem)
        return [self._access_stmt(ptr, True, val, self.span(c))]

    def _curand(self, fn, args, c) -> Value:
        """A curand generator call: the state (`&local` or `&states[i]`) read unless initialised,
        and replaced by an unknown value; the number drawn is unknown too."""
        *rest, state = args
        span = self.span(c)
        for a in rest:
            v = self.rvalue(a)
            if isinstance(v, Pointer) and fn == "curand_init":
                self.pending.extend(self._direction_vectors(v, span))
            elif isinstance(v, Pointer):
                raise Unsupported(c, f"'{fn}' with a pointer argument other than its state")
        target = self.address_of(strip(state).get_children().__next__()) if strip(state).kind == CK.UNARY_OPERATOR \
            else self.rvalue(state)
        if isinstance(target, LocalStruct):
            for path, _, ty in self.struct_leaves(self.records[target.ty]):
                self.pending.append(ir.Assign(f"{target.name}.{path}", self.opaque(f"{fn} state"), span))
        elif isinstance(target, LocalRef):
            self.pending.append(ir.Assign(target.name, self.opaque(f"{fn} state"), span))
        elif isinstance(target, Pointer):
            if fn != "curand_init":
                self.pending.append(self._access_stmt(target, False, None, span))
            self.pending.append(self._access_stmt(target, True, Scalar(self.opaque(f"{fn} state"), "int"), span))
        else:
            raise Unsupported(c, f"'{fn}' on a state that is no local variable or element in memory")
        return Scalar(self.opaque(f"result of {fn}"), "float" if "uniform" in fn or "normal" in fn else "uint")

    def _direction_vectors(self, ptr: Pointer, span) -> list[ir.Stmt]:
        """A Sobol generator's `curand_init(directions, offset, &state)` reads its direction vectors:
        32 words of 4 bytes (`curandDirectionVectors32_t`) or 64 of 8 (the 64-bit generator's)."""
        size = self.size(ptr.elem) or 4
        n = 32 if size == 4 else 64
        k = self.fresh_var("curand_init.k")
        read = self._access_stmt(replace(ptr, offset=_add(ptr.offset, ir.BinOp("*", ir.Var(k), ir.Const(size))),
                                         inner=()), False, None, span)
        return [ir.Assign(k, ir.Const(0), span),
                ir.Loop([], ir.BinOp("<", ir.Var(k), ir.Const(n)), [ir.Assign(k, ir.BinOp("+", ir.Var(k), ir.Const(1)), span)],
                        [read], span, next(self.loop_ids))]

    def opaque(self, why: str) -> ir.Opaque:
        return ir.Opaque(why, next(self.opaque_ids))

    # ---------- device functions ----------

    def _inline_expression(self, fn, params, args) -> Value:
        """A pure index helper's value: its return expression with each parameter bound to its
        argument's value (no statement: a loop's condition may call it)."""
        scope = {p.hash: self._convert(self.rvalue(_default_argument(p, a)), self.note_type(p.type))
                 for p, a in zip(params, args)}
        ret = children(children(next(k for k in fn.get_children() if k.kind == CK.COMPOUND_STMT))[0])[0]
        saved = self.scopes
        self.scopes = [self.scopes[0], scope]
        self.inline_depth += 1
        try:
            val = self.rvalue(ret)
        finally:
            self.inline_depth -= 1
            self.scopes = saved
        return self._convert(val, self.note_type(fn.result_type))

    def should_inline(self, fn) -> bool:
        key = fn.hash
        if key in self.inline_cache:
            return self.inline_cache[key]
        self.inline_cache[key] = True   # recursion: inlined (and refused at depth)
        out = False
        for p in fn.get_children():
            if p.kind == CK.PARM_DECL and (canonical(p.type).kind in (TK.POINTER, TK.LVALUEREFERENCE, TK.RVALUEREFERENCE,
                                                                      TK.CONSTANTARRAY, TK.INCOMPLETEARRAY)
                                           # (`unsigned char vals[8]`: a pointer, as clang keeps its declared type)
                                           or self.group_type(p.type)
                                         or self.lang == "opencl" and image_type(p.type.spelling)
                                         or canonical(p.type).kind == TK.RECORD and self._is_struct(
                                             self.note_type(p.type))):
                out = True   # (a group by value may be synchronised, an image written; a struct is no number)
        if not out:
            for n in fn.walk_preorder():
                if n.kind == CK.DECL_REF_EXPR:
                    r = n.referenced
                    if n.spelling in _THREAD_STATE or n.spelling in ("__syncthreads", "__syncwarp", "barrier",
                                                                     "threadgroup_barrier", "simdgroup_barrier"):
                        out = True
                        break
                    if r is not None and r.kind == CK.VAR_DECL and r.semantic_parent is not None and \
                            r.semantic_parent.kind in (CK.TRANSLATION_UNIT, CK.NAMESPACE) and \
                            not r.spelling.startswith("__kernelrace_param_"):
                        out = True
                        break
                    if r is not None and r.kind in (CK.FUNCTION_DECL, CK.FUNCTION_TEMPLATE) and r.hash != fn.hash:
                        body = self.user_function(r)
                        if body is not None and self.should_inline(body):
                            out = True
                            break
                if n.kind == CK.CALL_EXPR and n.spelling.startswith(("atomic", "__shfl", "simd_", "get_local",
                                                                      "get_group", "get_global")):
                    out = True
                    break
        if not out and _index_helper(fn):
            out = True   # `return x * n + y;`: an index the caller computes exactly, not an unknown function
        self.inline_cache[key] = out
        return out

    def inline(self, fn, ref, args, c, into=None, bindings=None) -> Value:
        if self.inline_depth > 8:
            raise Unsupported(c, f"recursion through '{fn.spelling}'")
        params = [p for p in fn.get_children() if p.kind == CK.PARM_DECL]
        if len(params) != len(args):
            raise Unsupported(c, f"call of '{fn.spelling}' with {len(args)} arguments")
        self.check_errors(fn)
        saved_t = dict(self.template_values), dict(self.template_types)
        self.bind_template(fn, ref)
        if bindings is not None:
            self.template_values.update(bindings[0])
            self.template_types.update(bindings[1])
        if _pure_index_helper(fn, params):
            try:
                return self._inline_expression(fn, params, args)
            finally:
                self.template_values, self.template_types = saved_t
        scope: dict = {}
        stmts: list[ir.Stmt] = []
        span = self.span(c)
        name = fn.spelling
        try:
            for p, a in zip(params, args):
                a = _default_argument(p, a)
                pt = canonical(p.type)
                if pt.kind == TK.RECORD and strip(a).kind == CK.DECL_REF_EXPR and \
                        isinstance(self.value(strip(a)), LocalStruct):
                    # a local struct passed by value (`sq(F3 v)`): the callee's own copy, member by member
                    own = LocalStruct(self.fresh_var(f"{name}.{p.spelling}"), self.value(strip(a)).ty)
                    stmts.extend(self.copy_struct_values(own, self.value(strip(a)), span))
                    scope[p.hash] = own
                    continue
                whole = self._index_vector(a)
                if whole is not None:
                    scope[p.hash] = whole   # (`reset(i, blockDim)`: its copy holds the launch's values)
                    continue
                if pt.kind in (TK.LVALUEREFERENCE, TK.RVALUEREFERENCE):
                    s = strip(a)
                    if s.kind == CK.DECL_REF_EXPR:
                        bound = self.value(s)
                        if isinstance(bound, (LocalRef, LocalStruct, SharedScalar, Pointer, ParamStruct)):
                            scope[p.hash], scope[("byref", p.hash)] = bound, isinstance(bound, Pointer)  # pointer_moves.py
                            continue
                    if s.kind in (CK.ARRAY_SUBSCRIPT_EXPR, CK.MEMBER_REF_EXPR) or (
                            s.kind == CK.UNARY_OPERATOR):
                        try:
                            ptr = self.place(s)
                        except Unsupported:
                            ptr = None
                        if isinstance(ptr, Pointer):
                            scope[p.hash] = ptr if (self._is_struct(ptr.elem) or ptr.inner) else SharedScalar(ptr)
                            continue
                    val = self.rvalue(a)
                elif pt.kind != TK.POINTER and self.holds_array(self.note_type(a.type)):   # (note_type drops a `*`)
                    val = self.struct_value(a)
                else:
                    val = self.rvalue(a)
                if isinstance(val, Pointer) and pt.kind != TK.POINTER and self.holds_array(val.elem):
                    # a struct holding an array passed by value: the callee's own copy
                    own = self.private_struct(f"{name}.{p.spelling}", val.elem)
                    stmts.extend(self.copy_elements(own, val, span))
                    scope[p.hash] = own
                elif isinstance(val, Pointer):
                    # (`T *buf` of a template: the argument's own element type, which T is bound to)
                    elem = self.note_type(pt.get_pointee()) if pt.kind == TK.POINTER and "type-parameter" not in \
                        pt.get_pointee().spelling else val.elem
                    scope[p.hash] = val.__class__(val.buffer, val.space, elem, val.offset,
                                                  val.inner if elem == val.elem else ())
                elif isinstance(val, (Group, LocalStruct, ParamStruct, Image)):
                    scope[p.hash] = val   # (a struct argument of the kernel: its fields are the kernel's)
                else:
                    ref_ = LocalRef(self.fresh_var(f"{name}.{p.spelling}"), self.note_type(pt))
                    stmts.extend(self._assign_local(ref_, val, span))
                    scope[p.hash] = ref_
            ret_t = canonical(fn.result_type)
            if ret_t.kind != TK.RECORD and canonical(c.type).kind == TK.RECORD and c.kind == CK.CALL_EXPR:
                ret_t = canonical(c.type)   # a template's `Vec<T>` result: the call's instantiated type
            saved = self.scopes, self.return_var, self.return_struct
            self.return_var = self.fresh_var(f"{name}.ret")
            ret_name = self.note_type(ret_t)
            self.return_struct = None
            if ret_t.kind == TK.RECORD and self.holds_array(ret_name):
                self.return_struct = into if isinstance(into, Pointer) and into.elem == ret_name else \
                    self.private_struct(self.return_var, ret_name)
            elif ret_t.kind == TK.RECORD and self._is_struct(ret_name):
                self.return_struct = into if isinstance(into, LocalStruct) and into.ty == ret_name else \
                    LocalStruct(self.return_var, ret_name)
            self.scopes = [self.scopes[0], scope]
            self.inline_depth += 1
            outer, self.pending = self.pending + stmts, []
            try:
                body = next(k for k in fn.get_children() if k.kind == CK.COMPOUND_STMT)
                body_ir = self.member_inits(fn, span) + self.block(body)   # (a constructor's initialisers first)
            finally:
                self.inline_depth -= 1
                ret_var, ret_struct = self.return_var, self.return_struct
                self.scopes, self.return_var, self.return_struct = saved
                self.pending = outer
        finally:
            self.template_values, self.template_types = saved_t
        if _has_return(body_ir):
            flag = self.fresh_var(f"{name}.returned")
            self.pending.append(ir.Assign(flag, ir.Const(0), span))
            # a return inside a loop leaves its loops first (`flag = 1; break`)
            body_ir = returns_out_of_loops(body_ir, flag)
            self.pending.extend(jumps_to_flag(body_ir, flag, span, ir.Return, _has_return))
        else:
            self.pending.extend(body_ir)
        if ret_struct is not None:
            return ret_struct
        if ret_t.kind == TK.VOID:
            return Scalar(ir.Const(0), "int")
        if vector_shape(ret_name):
            return self.rvalue_ref(LocalRef(ret_var, ret_name))
        return Scalar(ir.Var(ret_var), ret_name)


def _pure_index_helper(fn, params) -> bool:
    """An index helper (`return (n + m - 1) / m;`) whose parameters are numbers taken by value and
    whose expression assigns nothing: its value is its expression over the arguments' values."""
    if not _index_helper(fn) or any(canonical(p.type).kind not in _NUMBERS for p in params):
        return False
    body = next(k for k in fn.get_children() if k.kind == CK.COMPOUND_STMT)
    for n in body.walk_preorder():
        if n.kind == CK.COMPOUND_ASSIGNMENT_OPERATOR or n.kind == CK.CALL_EXPR or \
                n.kind == CK.BINARY_OPERATOR and n.binary_operator.name == "Assign" or \
                n.kind == CK.UNARY_OPERATOR and unary_op(n) in ("pre++", "pre--", "post++", "post--"):
            return False
    return True


_NUMBERS = (TK.BOOL, TK.CHAR_S, TK.SCHAR, TK.CHAR_U, TK.UCHAR, TK.SHORT, TK.USHORT, TK.INT, TK.UINT, TK.LONG, TK.ULONG,
            TK.LONGLONG, TK.ULONGLONG)


def _default_argument(param, arg):
    """The argument, or where the call leaves it to the parameter's default (clang's
    CXXDefaultArgExpr: an unexposed expression with nothing under it), the default's expression."""
    a = strip(arg)
    if a.kind == CK.UNEXPOSED_EXPR and not children(a) and a.extent.start.offset == a.extent.end.offset:
        default = [k for k in param.get_children() if k.kind.is_expression()]
        if default:
            return default[-1]
    return arg


def _vstore(fn: str):
    from analyzer.frontend.opencl import _VHALF, _VLOAD
    m = _VLOAD.match(fn) or _VHALF.match(fn)
    return m if m and m.group(1).startswith("vstore") else None


def _index_helper(fn) -> bool:
    """Whether a function's body is one `return` of an integer expression (an index helper such as
    `linear_idx(x, y, w, h)`): inlined, it keeps two threads' indices apart; as an uninterpreted
    function it lets two different arguments give one element (a false race)."""
    body = next((k for k in fn.get_children() if k.kind == CK.COMPOUND_STMT), None)
    stmts = children(body) if body is not None else []
    return len(stmts) == 1 and stmts[0].kind == CK.RETURN_STMT and canonical(fn.result_type).kind in (
        TK.INT, TK.UINT, TK.LONG, TK.ULONG, TK.LONGLONG, TK.ULONGLONG, TK.SHORT, TK.USHORT)


def _free_operator(ref, fn) -> bool:
    """A call of a free operator function, whose first operand may be a member (`r.o + r.d`)."""
    return ref is not None and ref.kind in (CK.FUNCTION_DECL, CK.FUNCTION_TEMPLATE) and fn.startswith("operator")


def _bound_callee(lowering, c):
    """The function a call names: through a template parameter a launch binds to a function
    (`template <vec_dot_t dot> ... dot(x, i)`), that function."""
    ref = c.referenced
    if ref is not None and ref.kind == CK.TEMPLATE_NON_TYPE_PARAMETER:
        return getattr(lowering, "template_functions", {}).get(ref.spelling, ref)
    return ref
