"""Pointers held in a local struct's members, in the clang lowering: a loader object (mlx's and
candle's `BlockLoader`: `threadgroup T* dst; const device T* src;` set by its constructor's member
initialisers, `src += tile_stride` in its `next()`). A pointer is a value of the lowering (a buffer and
a byte offset), never an IR variable, so a pointer member is bound under the key ("member",
"loader.src") in the kernel's own scope, which a member function inlined on the object sees too;
assignments, copies of the struct and its constructor's initialisers set it, a branch merges it and a
loop carries it as it does a pointer variable (pointer_moves.py). A member never set is a pointer of
unknown origin (an access through it is `unknown`). Mixed into ClangLowering."""

from __future__ import annotations

from dataclasses import replace

from analyzer import ir
from analyzer.frontend.c_tree import Unsupported
from analyzer.frontend.c_values import LocalRef, LocalStruct, Pointer, Scalar, Value, Vector
from analyzer.frontend.clang.cursors import CK, TK, canonical, children, in_union, strip
from analyzer.frontend.types import vector_shape

MEMBER = "member"
HELD = "inmem:"   # the path of a struct held in private memory starts so (never a C name)


def struct_path(obj) -> str | None:
    """The name a local struct's pointer members are bound under: a local struct's variable, or a
    struct held in private memory at a constant offset (`inmem:buffer@offset`); None for others (one
    at an offset that varies, an element of a struct array at a symbolic index, is not followed)."""
    if isinstance(obj, LocalStruct):
        return obj.name
    if isinstance(obj, Pointer) and obj.space == ir.PRIVATE and isinstance(obj.offset, ir.Const):
        return f"{HELD}{obj.buffer}@{obj.offset.value}"
    return None


class ClangMemberPointers:
    """Pointer members of local structs; mixed into ClangLowering."""

    def local_member(self, obj: LocalStruct, field: str, t, c=None) -> Value:
        """Member `field` (of type `t`) of a local struct: a nested struct, its pointer, or its variable;
        a union's member (`c` the reference) is another member's bytes, not modelled."""
        if c is not None and in_union(c.referenced):
            raise Unsupported(c, f"member '{field}' of a local union (its bytes are another member's)")
        ty = self.note_type(t)
        path = f"{obj.name}.{field}"
        if canonical(t).kind == TK.POINTER:
            return self.scopes[0].get((MEMBER, path)) or Pointer("?", ir.GLOBAL, ty, ir.Const(0))
        return LocalStruct(path, ty) if self._is_struct(ty) else Scalar(ir.Var(path), ty)

    def lane_of(self, vec, comp) -> Scalar | None:
        """Lane `comp` of a local vector's variables, of a vector value, or of a local struct's
        vector member held as one packed variable (`r.o.x`); None for anything else."""
        if comp is None:
            return None
        if isinstance(vec, LocalRef) and vector_shape(vec.ty):
            return Scalar(ir.Var(f"{vec.name}.{comp}"), vector_shape(vec.ty)[0])
        if isinstance(vec, Vector) and comp < len(vec.comps):
            return Scalar(vec.comps[comp], (vector_shape(vec.ty) or ("int", 0))[0])
        return self.packed_lane(vec, comp)

    @staticmethod
    def packed_lane(vec, comp) -> Scalar | None:
        """Lane `comp` of a vector member of a local struct, held as one packed variable (`r.o.x`)."""
        shape = vector_shape(vec.ty) if isinstance(vec, Scalar) and isinstance(vec.expr, ir.Var) else None
        if shape and comp is not None and comp < shape[1]:
            return Scalar(ir.Call(f"lane{comp}", (vec.expr,)), shape[0])
        return None

    def set_member_pointer(self, path: str, t, val: Value, c, span=None) -> list[ir.Stmt]:
        """`obj.p = q` for a pointer member (the struct's path `obj.p`), `t` the member's type; where
        a loop holds its offset in a variable (pointer_moves.py), the statement setting it."""
        if isinstance(val, Scalar) and isinstance(val.expr, ir.Const) and val.expr.value == 0:
            val = Pointer("?", ir.GLOBAL, self.note_type(t), ir.Const(0))   # (a null pointer)
        if not isinstance(val, Pointer):
            raise Unsupported(c, "a pointer member given a value that is not a pointer")
        pointee = canonical(t).get_pointee() if canonical(t).kind == TK.POINTER else None
        elem = self.note_type(pointee) if pointee is not None and "type-parameter" not in pointee.spelling else val.elem
        val = replace(val, elem=elem, inner=val.inner if elem == val.elem else ())
        key = (MEMBER, path)
        var = self.scopes[0].get(("held", key))
        if var is None:
            if self.after_goto and key in self.scopes[0]:   # a move a forward goto may skip
                raise Unsupported(c, "a pointer member moved after a goto")
            self.scopes[0][key] = val
            return []
        held = self.scopes[0][key]
        if (val.buffer, val.space) != (held.buffer, held.space):
            raise Unsupported(c, "a pointer member a loop or a switch moves to another buffer")
        self.scopes[0][key] = replace(val, offset=ir.Var(var), bounds=(), row=None, shape_at=None)
        return [ir.Assign(var, val.offset, span or self.span(c))]

    def member_pointer_target(self, t) -> str | None:
        """The path (`loader.src`) of a member expression naming a pointer member of a local struct
        (`loader.src`, or `src` / `this->src` in a member function inlined on one), else None."""
        if canonical(t.type).kind != TK.POINTER or t.referenced is None or t.referenced.kind != CK.FIELD_DECL:
            return None
        kids = children(t)
        if not kids or strip(kids[0]).kind == CK.CXX_THIS_EXPR:
            obj = self.this_val
        else:
            sb = strip(kids[0])
            try:
                obj = self.value(sb) if sb.kind in (CK.DECL_REF_EXPR, CK.MEMBER_REF_EXPR) else None
            except Unsupported:
                obj = None
        name = struct_path(obj)
        return f"{name}.{t.spelling}" if name is not None else None

    def held_member_pointer(self, t) -> Pointer | None:
        """A pointer member read of a struct held in private memory (it holds an array: mlx's conv
        loaders' `threadgroup T* dst` next to `int read_n[n_rows]`): the pointer its initialiser or
        last assignment bound, as for a local struct's; None for any other member expression."""
        path = self.member_pointer_target(t)
        if path is None or not path.startswith(HELD):
            return None
        return self.scopes[0].get((MEMBER, path)) or Pointer("?", ir.GLOBAL, self.note_type(t.type), ir.Const(0))

    def store_member_pointer(self, t, val: Value) -> list[ir.Stmt] | None:
        """A store to a pointer member of a local struct: the member rebound (no statement); None for
        any other target."""
        path = self.member_pointer_target(t)
        if path is None:
            return None
        return self.set_member_pointer(path, t.type, val, t)

    def pointer_member_paths(self, record, prefix: str = "") -> list[tuple[str, object]]:
        """(path, type) of every pointer member of a record, nested structs' too."""
        out = []
        for f in canonical(record).get_fields():
            ft = canonical(f.type)
            if ft.kind == TK.POINTER:
                out.append((f"{prefix}{f.spelling}", f.type))
            elif ft.kind == TK.RECORD and self._is_struct(self.note_type(ft)):
                out.extend(self.pointer_member_paths(ft, f"{prefix}{f.spelling}."))
        return out

    def copy_member_pointers(self, dst, src, c, span=None) -> list[ir.Stmt]:
        """A local struct copied whole (`Loader b = a;`, an argument passed by value): its pointer
        members are the source's."""
        out: list[ir.Stmt] = []
        record = self.records.get(dst.ty)
        for path, t in self.pointer_member_paths(record) if record is not None else []:
            # (one loaded from memory or given by an argument: of unknown origin, an access through it unknown)
            val = self.local_member(src, path, t) if isinstance(src, LocalStruct) else \
                Pointer("?", ir.GLOBAL, self.note_type(t), ir.Const(0))
            out.extend(self.set_member_pointer(f"{dst.name}.{path}", t, val, c, span))
        return out

    def member_inits(self, fn, span) -> list[ir.Stmt]:
        """A constructor's member initialisers (`: dst(dst_ + bi), src(src_)`) and the members' own
        default initialisers, in the members' order (C++'s), on the object it is inlined on (this_val),
        before its body; a base class's initialiser is not modelled."""
        if fn.kind != CK.CONSTRUCTOR:
            return []
        given, member = {}, None
        for k in fn.get_children():
            if k.kind == CK.MEMBER_REF:
                member = k
            elif k.kind.is_expression():
                if member is None:
                    raise Unsupported(k, "a base class's initialiser in a constructor")
                given[member.spelling] = (member, k)
                member = None
        obj = self.this_val
        record = self.records.get(obj.ty if isinstance(obj, LocalStruct) else getattr(obj, "elem", None))
        out: list[ir.Stmt] = []
        for f in canonical(record).get_fields() if record is not None else ():
            m, init = given.get(f.spelling, (f, None))
            if init is None and any(t.spelling in ("=", "{") for t in f.get_tokens()):
                # (its own initialiser, `short k = 0;`: the last expression, never an array's extent)
                own = [k for k in f.get_children() if k.kind.is_expression()]
                init = own[-1] if own else None
            if init is not None:
                out.extend(self.flush(self._init_member(m, f, init, span)))
        return out

    def _init_member(self, member, field, init, span) -> list[ir.Stmt]:
        obj = self.this_val
        t = canonical(field.type)
        s = strip(init)
        empty = s.kind in (CK.INIT_LIST_EXPR, CK.UNEXPOSED_EXPR) and not children(s)   # `x()`, `x{}`
        elem = canonical(t.element_type) if t.kind == TK.CONSTANTARRAY else t
        if elem.kind == TK.RECORD and not list(elem.get_fields()):
            return []   # a value of no state (a SIMD-group matrix), or an array of them
        if isinstance(obj, Pointer):   # a struct held in private memory (it holds an array)
            name = struct_path(obj)
            if t.kind == TK.POINTER and name is not None:
                val = Scalar(ir.Const(0), "int") if empty else self.rvalue(init)
                return self.set_member_pointer(f"{name}.{field.spelling}", t, val, init)
            if t.kind in (TK.POINTER, TK.CONSTANTARRAY, TK.RECORD):
                raise Unsupported(member, f"initialiser of the member '{field.spelling}' of a struct held in memory")
            place = self.member_of(obj, field, member)
            val = Scalar(ir.Const(0), place.elem) if empty else self.rvalue(init)
            return self.flush([]) + [self._access_stmt(place, True, self._convert(val, place.elem), span)]
        if not isinstance(obj, LocalStruct):
            raise Unsupported(member, f"initialiser of '{field.spelling}' outside a struct")
        target = self.local_member(obj, field.spelling, t)
        if t.kind == TK.POINTER:
            val = Scalar(ir.Const(0), "int") if empty else self.rvalue(init)
            return self.set_member_pointer(f"{obj.name}.{field.spelling}", t, val, init)
        if isinstance(target, LocalStruct):
            return [] if empty else self.copy_into(target, init, span)
        if t.kind == TK.CONSTANTARRAY:
            raise Unsupported(member, f"initialiser of the array member '{field.spelling}'")
        val = Scalar(ir.Const(0), target.ty) if empty else self._convert(self.rvalue(init), target.ty)
        return [ir.Assign(target.expr.name, self._scalar(val), span)]

    def carried_member_keys(self, c) -> list:
        """The pointer members a loop may move: those of every local struct it names (or of the object
        of the member function being inlined, where the loop uses it), held in the kernel's scope."""
        names = set()
        this = struct_path(self.this_val)
        for n in c.walk_preorder():
            if n.kind == CK.DECL_REF_EXPR and n.referenced is not None:
                name = struct_path(self._bound(n.referenced.hash))
                if name is not None:
                    names.add(name)
            elif this is not None and (
                    n.kind == CK.CXX_THIS_EXPR or n.kind in (CK.MEMBER_REF_EXPR, CK.CALL_EXPR) and
                    n.referenced is not None and n.referenced.kind in (CK.FIELD_DECL, CK.CXX_METHOD)):
                names.add(this)
        if not names:
            return []
        return [k for k, v in self.scopes[0].items() if isinstance(k, tuple) and k[0] == MEMBER and
                isinstance(v, Pointer) and v.buffer != "?" and any(k[1].startswith(n + ".") for n in names)]
