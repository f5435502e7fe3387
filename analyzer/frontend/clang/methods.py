"""Local struct values that hold arrays, and the member functions called on structs.

A local struct with an array member (a packed 128-bit vector: `T payload[16 / sizeof(T)]` with an
`operator[]`) is private storage of its own: a private buffer of the struct's size, so that an
element picked by a runtime index (`v[k]` in a loop) is an exact access of it. Copying such a struct
from or to memory (`*reinterpret_cast<const Vec*>(p)`, `*reinterpret_cast<Vec*>(p) = v`) is one
access per scalar element, at the element's byte offset: the global accesses are exactly those the
copy makes. A member function is inlined with `this` bound to its object; one that returns a
reference is a place (`v[k] = x` writes the element `operator[]` names).
"""

from __future__ import annotations

from analyzer import ir
from analyzer.frontend.c_tree import Unsupported
from analyzer.frontend.c_values import LocalRef, LocalStruct, Pointer, Scalar, SharedScalar, Value, _add
from analyzer.frontend.clang.cursors import CK, TK, canonical, children, has_union, strip, type_name
from analyzer.frontend.clang.exprs import field_offset
from analyzer.frontend.clang.reader import evaluate_int, unary_op
from analyzer.frontend.types import vector_shape

_HINTED_STORES = frozenset({"__stcs", "__stcg", "__stwb", "__stwt"})
# a struct copied element by element: past this many scalar elements the copy is not unrolled
MAX_COPIED_ELEMENTS = 256


class ClangMethods:
    """Private structs and member-function calls; mixed into ClangLowering."""

    this_val = None   # the object a member function being inlined was called on (a Pointer or LocalStruct)

    def holds_array(self, ty: str) -> bool:
        """Whether a struct lives in memory: it holds an array, or a union (whose members share bytes)."""
        record = self.records.get(ty)
        return record is not None and (any(t is None for _, _, t in self.struct_leaves(record)) or has_union(record))

    def private_struct(self, name: str, ty: str) -> Pointer:
        """A fresh local struct value held in a private buffer of its own."""
        size = self.size(ty)
        if not size:
            raise Unsupported(None, f"local struct '{ty}' of a size clang does not know")
        bname = self.fresh_var(name)
        self.kernel.buffers[bname] = ir.Buffer(bname, ir.PRIVATE, ty, size, size_bytes=size)
        return Pointer(bname, ir.PRIVATE, ty, ir.Const(0))

    def address_passed(self, d) -> bool:
        """Whether a local's address is an argument of a call of a function of the user's files
        (`threadgroup_sum(&mean, ...)`, which may subscript it): such a local lives in memory."""
        fn = d.semantic_parent
        if fn is None:
            return False
        found = self.passed_addresses.get(fn.hash)
        if found is None:
            found = self.passed_addresses[fn.hash] = set()
            for n in fn.walk_preorder():
                if n.kind != CK.CALL_EXPR or self.user_function(n.referenced) is None:
                    continue
                for a in n.get_arguments():
                    s = strip(a)
                    kids = children(s) if s.kind == CK.UNARY_OPERATOR and unary_op(s) == "&" else []
                    target = strip(kids[0]) if kids else None
                    if target is not None and target.kind == CK.DECL_REF_EXPR and target.referenced is not None:
                        found.add(target.referenced.hash)
        return d.hash in found

    def private_scalar(self, d, name: str, ty: str, init, span) -> list[ir.Stmt]:
        """A scalar local whose address is passed on: a one-element private buffer, every use an
        access of it (as a `__shared__` scalar is one of shared memory)."""
        size = self.size(ty)
        bname = self.fresh_var(name)
        self.kernel.buffers[bname] = ir.Buffer(bname, ir.PRIVATE, ty, size, size_bytes=size)
        ptr = Pointer(bname, ir.PRIVATE, ty, ir.Const(0))
        self.scopes[-1][d.hash] = SharedScalar(ptr)
        if init is None:
            return []
        return self.flush([self._access_stmt(ptr, True, self._convert(self.rvalue(init), ty), span)])

    def element_leaves(self, record, prefix: str = "", offset: int = 0):
        """(path, byte offset, type) of every scalar of a record, the elements of its array members
        one by one (`payload[2]`); vector members as one leaf."""
        t = canonical(record)
        for f in t.get_fields():
            ft = canonical(f.type)
            off = offset + (t.get_offset(f.spelling) or 0) // 8
            yield from self._elements(ft, f"{prefix}{f.spelling}", off)

    def _elements(self, ft, path: str, off: int):
        if ft.kind == TK.CONSTANTARRAY:
            et = canonical(ft.element_type)
            esize = et.get_size()
            n = ft.element_count
            if esize is None or esize <= 0 or n > MAX_COPIED_ELEMENTS:
                raise Unsupported(None, f"copy of a struct whose array member '{path}' has {n} elements")
            for i in range(n):
                yield from self._elements(et, f"{path}[{i}]", off + i * esize)
        elif ft.kind == TK.RECORD and self._is_struct(self.note_type(ft)):
            yield from self.element_leaves(ft, f"{path}.", off)
        else:
            yield path, off, self.note_type(ft)

    def copy_elements(self, dst: Pointer, src: Pointer, span, read_span=None) -> list[ir.Stmt]:
        """`dst = src` for structs in memory (private or not), one read and one write per element."""
        record = self.records.get(dst.elem)
        if record is None:
            raise Unsupported(None, f"copy of struct '{dst.elem}'")
        leaves = list(self.element_leaves(record))
        if len(leaves) > MAX_COPIED_ELEMENTS:
            raise Unsupported(None, f"copy of struct '{dst.elem}' of {len(leaves)} elements")
        out: list[ir.Stmt] = []
        for _, off, ty in leaves:
            val = self.load(Pointer(src.buffer, src.space, ty, _add(src.offset, ir.Const(off))), read_span or span)
            out.extend(self.flush([]))
            out.append(self._access_stmt(Pointer(dst.buffer, dst.space, ty, _add(dst.offset, ir.Const(off))), True, val, span))
        return out

    def struct_value(self, c) -> Pointer:
        """The memory holding a struct value that holds an array (through its copy constructor)."""
        s = strip(c)
        if s.kind == CK.CALL_EXPR and s.referenced is not None and s.referenced.kind == CK.CONSTRUCTOR:
            args = list(s.get_arguments())
            if len(args) == 1:
                return self.struct_value(args[0])
            raise Unsupported(c, f"constructor of '{self.note_type(s.type)}', which holds an array")
        if s.kind == CK.CALL_EXPR:
            val = self.call(s)
        elif s.kind == CK.CXX_THIS_EXPR or s.kind == CK.UNARY_OPERATOR and s.spelling == "*":
            val = self.place(s) if s.kind != CK.CXX_THIS_EXPR else self.this_val
        else:
            val = self.struct_ref(s)
        if isinstance(val, SharedScalar):
            val = val.ptr
        if not isinstance(val, Pointer):
            raise Unsupported(c, f"value of '{self.note_type(s.type)}', which holds an array")
        return val

    def user_function(self, ref):
        """The definition (with a body) of a function of the user's files, or None: the primary
        template of an instantiation."""
        if ref is None or ref.kind not in (CK.FUNCTION_DECL, CK.FUNCTION_TEMPLATE, CK.CXX_METHOD):
            return None
        if self.in_headers(ref):
            return None
        if self.instantiated and any(k.kind == CK.COMPOUND_STMT for k in ref.get_children()):
            return ref   # in a specialization's body: the callee's own instantiated body
        tmpl = ref.specialized_template
        base = tmpl if tmpl is not None else ref
        d = base.get_definition() or base
        if d is None or not any(k.kind == CK.COMPOUND_STMT for k in d.get_children()):
            return None
        if self.in_headers(d):
            return None
        return d

    def library_stmt(self, fn: str, args, c) -> list[ir.Stmt] | None:
        """The C library's memcpy and memset, and CUDA's stores with a cache hint (`__stcs(p, v)`: the store)."""
        if fn == "memcpy" and len(args) == 3 and self.user_function(c.referenced) is None:
            return self.memcpy_stmt(args, c)
        if len(args) == 3 and self.is_library_memset(fn, c, children(c)):   # memset.py
            return self.memset_stmt(args, c)
        if self.lang == "cuda" and fn in _HINTED_STORES and len(args) == 2 and self.from_headers(c):
            return self.store_hinted(args, c)
        if self.lang == "cuda" and fn.startswith("__pipeline_") and self.from_headers(c):
            return self.pipeline_stmt(fn, args, c)
        return None

    def static_member(self, c) -> Scalar:
        """A static constant member named through an object (`packed.size`): its value."""
        static = c.referenced
        n = evaluate_int(c) if static.type.is_const_qualified() else None
        if n is None and static.type.is_const_qualified():
            init = [k for k in static.get_children() if k.kind.is_expression()]
            n = evaluate_int(init[-1]) if init else None
        if n is None:
            raise Unsupported(c, f"static member '{c.spelling}' of a value clang does not know")
        return Scalar(ir.Const(n), "int")

    def member_of(self, ptr: Pointer, field, c, record_t=None) -> Pointer:
        """The place of member `field` of the struct at `ptr` (its type as the instantiated record has it)."""
        if record_t is None:
            record_t = self.records.get(ptr.elem)
            if record_t is None:
                raise Unsupported(c, f"member '{field.spelling}' of '{ptr.elem}', not a struct")
        off = field_offset(record_t, field)
        if off is None or off < 0:
            raise Unsupported(c, f"member '{field.spelling}' at an offset clang does not know")
        ft = self._field_type(type_name(canonical(record_t)), field)
        dims: tuple = ()
        if ft.kind == TK.CONSTANTARRAY:
            extents = []
            t = ft
            while t.kind == TK.CONSTANTARRAY:
                extents.append(t.element_count)
                t = canonical(t.element_type)
            dims = tuple(extents)
        elem = self.note_type(ft)
        return Pointer(ptr.buffer, ptr.space, elem, _add(ptr.offset, ir.Const(off // 8)), dims[1:] if dims else ())

    def memcpy_stmt(self, args, c) -> list[ir.Stmt]:
        """`memcpy(&bits, &payload, sizeof(bits))` of a constant size between locals and memory: the
        bytes moved in 4-byte words (a vector local's lanes, a place's words), each a read and a write."""
        dst_c, src_c, n_c = args
        n = evaluate_int(n_c)
        if n is None or n <= 0 or n % 4 or n > 4 * MAX_COPIED_ELEMENTS:
            raise Unsupported(c, "memcpy of a size that is not a constant multiple of 4 bytes")
        dst, src = self._bytes_at(dst_c, n), self._bytes_at(src_c, n)
        span = self.span(c)
        out: list[ir.Stmt] = []
        for j in range(n // 4):
            if isinstance(src, LocalRef):
                val = Scalar(ir.Var(f"{src.name}.{j}" if vector_shape(src.ty) else src.name), "int")
            else:
                val = self.load(Pointer(src.buffer, src.space, "int", _add(src.offset, ir.Const(4 * j))), span)
            out.extend(self.flush([]))
            if isinstance(dst, LocalRef):
                out.append(ir.Assign(f"{dst.name}.{j}" if vector_shape(dst.ty) else dst.name, self._scalar(val), span))
            else:
                out.append(self._access_stmt(Pointer(dst.buffer, dst.space, "int", _add(dst.offset, ir.Const(4 * j))), True,
                                             val, span))
        return out

    def _bytes_at(self, c, n: int):
        s = strip(c)
        if s.kind == CK.UNARY_OPERATOR and s.spelling == "&" or unary_op(s) == "&":
            val = self.address_of(children(s)[0])
        else:
            val = self.rvalue(s)
        if isinstance(val, SharedScalar):
            val = val.ptr
        if isinstance(val, LocalRef):
            shape = vector_shape(val.ty)
            if (shape and self.size(shape[0]) == 4 and shape[1] * 4 == n) or (not shape and self.size(val.ty) == n == 4):
                return val
            raise Unsupported(c, f"memcpy of {n} bytes to or from a local '{val.ty}'")
        if isinstance(val, Pointer) and val.buffer != "?":
            return val
        raise Unsupported(c, "memcpy to or from something that is not a local or memory")

    def store_hinted(self, args, c) -> list[ir.Stmt]:
        ptr = self.rvalue(args[0])
        if not isinstance(ptr, Pointer):
            raise Unsupported(args[0], f"'{c.spelling}' through something that is not a pointer")
        val = self.rvalue(args[1])
        return self.flush([]) + [self._access_stmt(ptr, True, val, self.span(c))]

    def construct_dependent(self, local: Pointer, s, span) -> list[ir.Stmt] | None:
        """`Vec<T>{bits}` inside a template, a construction clang leaves unresolved: the class
        template's constructor of as many parameters (not a copy or a move), inlined on the new value."""
        tref = next((k for k in s.get_children() if k.kind == CK.TEMPLATE_REF), None)
        inits = [k for k in s.get_children() if k.kind in (CK.INIT_LIST_EXPR,) or k.kind.is_expression()]
        if tref is None or tref.referenced is None or len(inits) != 1:
            return None
        args = children(inits[0]) if inits[0].kind == CK.INIT_LIST_EXPR else inits
        ctors = [k for k in tref.referenced.get_children() if k.kind == CK.CONSTRUCTOR and
                 not k.is_copy_constructor() and not k.is_move_constructor() and
                 len([p for p in k.get_children() if p.kind == CK.PARM_DECL]) == len(args)]
        if len(ctors) != 1 or not args:
            return None
        return self._run_constructor(local, ctors[0], None, args, s)

    def _run_constructor(self, local: Pointer, d, ref, args, s) -> list[ir.Stmt] | None:
        if self.in_headers(d) or not any(k.kind == CK.COMPOUND_STMT for k in d.get_children()):
            return None
        saved, saved_t = self.this_val, (dict(self.template_values), dict(self.template_types))
        self.this_val = local
        try:
            self.bind_class_template(d, ref, local.elem if isinstance(local, Pointer) else local.ty)
            self.inline(d, ref, list(args), s)
        finally:
            self.this_val = saved
            self.template_values, self.template_types = saved_t
        return self.flush([])

    def construct_into(self, local: Pointer, s, span) -> list[ir.Stmt] | None:
        """A struct holding an array built by a constructor of the user's (llm.c's `Packed128(int4 bits)`
        copying the bits in with memcpy): the constructor inlined with `this` the new value; None for
        the implicit copy and move constructors (a copy, which the caller makes)."""
        ref = s.referenced
        if ref.is_copy_constructor() or ref.is_move_constructor():
            return None
        tmpl = ref.specialized_template
        d = (tmpl if tmpl is not None else ref).get_definition()
        if d is None:
            return None
        return self._run_constructor(local, d, ref, list(s.get_arguments()), s)

    # ---------- member functions ----------

    def method_target(self, c):
        """(the member function, its object's cursor, the other arguments) of a call of a non-static
        member function of the user's files (`v.f(x)`, `v[k]` through `operator[]`), or None."""
        ref = c.referenced
        if ref is None or ref.kind != CK.CXX_METHOD or ref.is_static_method():
            return None
        args = list(c.get_arguments())
        kids = children(c)
        callee = strip(kids[0]) if kids else None
        if callee is not None and callee.kind == CK.MEMBER_REF_EXPR:
            obj_kids = children(callee)
            if not obj_kids:
                return None if self.this_val is None else (ref, None, args)   # `f(x)` inside a method
            return ref, obj_kids[0], args
        if c.spelling.startswith("operator") and args:
            return ref, args[0], args[1:]
        return None

    def method_call(self, c, into=None, want_place: bool = False) -> Value | None:
        """A member function of the user's files called on a struct value: inlined with `this` bound
        to the object. With want_place, the place a reference-returning one names (a Pointer)."""
        ref = c.referenced
        if ref is not None and ref.kind == CK.CXX_METHOD and ref.is_static_method() and not want_place:
            body = self.user_function(ref)   # `Vec::load(p)`: inlined with its class's type arguments
            if body is None:
                return None
            saved_t = dict(self.template_values), dict(self.template_types)
            try:
                self.bind_class_template(body, ref)
                return self.inline(body, ref, list(c.get_arguments()), c, into)
            finally:
                self.template_values, self.template_types = saved_t
        target = self.method_target(c) if ref is not None else self.dependent_method(c)
        if target is None:
            return None
        ref, obj_c, args = target
        before = list(self.pending)
        obj = self.this_val if obj_c is None else self.object_of(obj_c)
        if obj is None:
            self.pending = before
            return None
        if isinstance(ref, _Named):
            # resolved by name in the object's class template: its body is the primary's
            body = self._method_named(obj.elem, ref.spelling, len(args)) if isinstance(obj, Pointer) and \
                self.holds_array(obj.elem) else None
            if body is None:
                self.pending = before   # (the caller reads the object its own way)
                return None
            ref = body
        else:
            body = self.user_function(ref)
        if body is None:
            return None
        returns_ref = canonical(ref.result_type).kind == TK.LVALUEREFERENCE
        saved = self.this_val
        saved_t = dict(self.template_values), dict(self.template_types)
        self.this_val = obj
        try:
            self.bind_class_template(body, ref, obj.elem if isinstance(obj, Pointer) else None)
            if returns_ref:
                return self.reference_result(body, ref, args, c, want_place)
            if want_place:
                return None
            return self.inline(body, ref, args, c, into)
        finally:
            self.this_val = saved
            self.template_values, self.template_types = saved_t

    def bind_class_template(self, body, ref, this_type: str | None = None) -> None:
        """The type parameters of a class template bound to those of the class `ref` is a member of
        (the body inlined is the primary template's, where `T` is still a parameter)."""
        primary = body.semantic_parent
        record = ref.semantic_parent if ref is not None else None
        if primary is None or primary.kind != CK.CLASS_TEMPLATE:
            return
        if isinstance(this_type, str) and this_type in self.records:
            t = canonical(self.records[this_type])
        elif record is not None:
            t = canonical(record.type)
        else:
            return
        n = t.get_num_template_arguments()
        tparams = [p for p in primary.get_children() if p.kind in (CK.TEMPLATE_TYPE_PARAMETER,
                                                                    CK.TEMPLATE_NON_TYPE_PARAMETER)]
        decl = t.get_declaration()
        for i, tp in enumerate(tparams[:max(n, 0)]):
            if tp.kind == CK.TEMPLATE_TYPE_PARAMETER:
                at = t.get_template_argument_type(i)
                if at.kind != TK.INVALID:
                    self.template_types[tp.spelling] = self.note_type(at)
            elif decl is not None and decl.kind != CK.NO_DECL_FOUND and \
                    decl.get_template_argument_kind(i).name == "INTEGRAL":
                # (`8 * (simd_group_id / WN)` in the pattern's constructor: the specialization's value)
                self.template_values[tp.spelling] = Scalar(ir.Const(decl.get_template_argument_value(i)), "int")

    def dependent_method(self, c):
        """`value.get_bits()` inside a template, where clang leaves the member unresolved: a
        placeholder naming the method (resolved once the object's struct is known)."""
        kids = children(c)
        callee = strip(kids[0]) if kids else None
        if callee is None or callee.kind != CK.MEMBER_REF_EXPR or callee.referenced is not None:
            return None
        obj_kids = children(callee)
        name = self.source.text(callee).rsplit(".", 1)[-1].strip()
        if not obj_kids or not name.isidentifier():
            return None
        return _Named(name), obj_kids[0], list(c.get_arguments())

    def stateless_specialisation_method(self, obj_c, name: str, nargs: int):
        """`shobj.GetPointer()` on a local `SharedMemory<T> shobj;` of a class template of the
        user's files with no data member: the method of the specialisation of the kernel's bound
        types (the primary template where none is declared), or None. Its object holds nothing,
        so the method reads only its arguments and what it declares."""
        s = strip(obj_c)
        var = s.referenced if s.kind == CK.DECL_REF_EXPR else None
        if var is None or var.kind != CK.VAR_DECL:
            return None
        kids = children(var)
        tmpl = next((k.referenced for k in kids if k.kind == CK.TEMPLATE_REF), None)
        if tmpl is None or tmpl.kind != CK.CLASS_TEMPLATE or self.in_headers(tmpl):
            return None
        args = []
        for k in kids:
            if k.kind == CK.TYPE_REF:
                r = k.referenced
                bound = self.template_types.get(k.spelling) if r is not None and \
                    r.kind == CK.TEMPLATE_TYPE_PARAMETER else None
                args.append(bound or type_name(canonical(k.type)))
            elif k.kind.is_expression() or k.kind == CK.DECL_REF_EXPR:
                return None   # (a non-type argument: not matched here)
        owner = tmpl.semantic_parent
        chosen = tmpl
        for d in children(owner) if owner is not None else ():
            if d.kind in (CK.STRUCT_DECL, CK.CLASS_DECL) and d.specialized_template == tmpl and d.is_definition():
                t = canonical(d.type)
                n = t.get_num_template_arguments()
                if n == len(args) and all(type_name(canonical(t.get_template_argument_type(i))) == a
                                          for i, a in enumerate(args)):
                    chosen = d
                    break
        if any(m.kind == CK.FIELD_DECL for m in chosen.get_children()):
            return None
        return _defined_method(chosen, name, nargs)

    def _method_named(self, struct: str, name: str, nargs: int):
        record = self.records.get(struct)
        decl = canonical(record).get_declaration() if record is not None else None
        primary = decl.specialized_template if decl is not None else None
        for owner in (primary, decl):
            m = _defined_method(owner, name, nargs) if owner is not None else None
            if m is not None:
                return m
        return None

    def object_of(self, obj_c):
        s = strip(obj_c)
        if s.kind == CK.CXX_THIS_EXPR:
            return self.this_val
        if s.kind == CK.UNARY_OPERATOR and s.spelling == "*" or canonical(s.type).kind == TK.POINTER:
            val = self.rvalue(s)
            return val if isinstance(val, Pointer) else None
        try:
            val = self.value(s) if s.kind == CK.DECL_REF_EXPR else self.struct_ref(s)
        except Unsupported:
            return None
        if isinstance(val, SharedScalar):
            val = val.ptr
        return val if isinstance(val, (Pointer, LocalStruct)) else None

    def reference_result(self, body, ref, args, c, want_place: bool) -> Value:
        """A function returning a reference, whose body is one `return place;`: the place, with the
        parameters bound (the value read from it unless want_place)."""
        stmts = children(next(k for k in body.get_children() if k.kind == CK.COMPOUND_STMT))
        if len(stmts) != 1 or stmts[0].kind != CK.RETURN_STMT or not children(stmts[0]):
            raise Unsupported(c, f"'{ref.spelling}' returns a reference from more than one statement")
        params = [p for p in body.get_children() if p.kind == CK.PARM_DECL]
        if len(params) != len(args):
            raise Unsupported(c, f"call of '{ref.spelling}' with {len(args)} arguments")
        scope: dict = {}
        for p, a in zip(params, args):
            val = self.rvalue(a)
            if isinstance(val, (Pointer, LocalStruct)) or isinstance(val, Scalar):
                scope[p.hash] = val
            else:
                raise Unsupported(a, f"argument of '{ref.spelling}' that is not a number or a pointer")
        saved_t = dict(self.template_values), dict(self.template_types)
        saved_scopes = self.scopes
        self.scopes = [self.scopes[0], scope]
        try:
            ret = children(stmts[0])[0]
            place = self.place(ret) if canonical(strip(ret).type).kind != TK.RECORD else self.struct_ref(ret)
        finally:
            self.scopes = saved_scopes
            self.template_values, self.template_types = saved_t
        if want_place or not isinstance(place, Pointer) or self._is_struct(place.elem):
            return place
        return self.load(place, self.span(c))

    def this_member(self, c) -> Value | None:
        """`payload` (or `this->payload`) inside a member function: the member of the bound object."""
        obj = self.this_val
        field = c.referenced
        if obj is None or field is None or field.kind != CK.FIELD_DECL:
            return None
        if isinstance(obj, LocalStruct):
            return self.local_member(obj, field.spelling, self._field_type(obj.ty, field))
        return self.member_of(obj, field, c)

    def _field_type(self, record_name: str, field):
        """The member's type in the instantiated record (inside a class template, the field's own
        type is dependent: `T payload[16 / sizeof(T)]`)."""
        record = self.records.get(record_name)
        if record is not None:
            for f in canonical(record).get_fields():
                if f.spelling == field.spelling:
                    return canonical(f.type)
        return canonical(field.type)


class _Named:
    """A member function known only by its name until its object's struct is known."""

    def __init__(self, name: str):
        self.spelling = name


def _defined_method(record, name: str, nargs: int):
    """The non-static method `name` of `nargs` parameters that `record` declares with a body, or None."""
    for m in record.get_children():
        if m.kind == CK.CXX_METHOD and m.spelling == name and not m.is_static_method() and \
                len([p for p in m.get_children() if p.kind == CK.PARM_DECL]) == nargs and \
                any(k.kind == CK.COMPOUND_STMT for k in m.get_children()):
            return m
    return None
