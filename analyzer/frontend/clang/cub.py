"""cub's block collectives (`cub::BlockReduce`, `cub::BlockScan`, the bundled <cub/cub.cuh>) in the
clang lowering.

A collective is called by every thread of the block on its `TempStorage` (a shared variable). It is
read as cub's own algorithms run: each thread writes its input to its slot of the temporary storage
(slot `x + y*DX + z*DX*DY` of the class's block dimensions), a block barrier (`__syncthreads()`, as
cub's CTA_SYNC), and each thread reads every slot; the result (the reduction, the scan's output) is
a value the analysis does not interpret. The temporary storage is BLOCK_DIM_X*Y*Z elements of T, at
least as large as cub's. So a second collective on the same storage without a barrier between them
races with the first's reads, as in cub; and a call under a condition is a barrier some threads
miss. Any other method or class of cub makes the kernel unknown."""

from __future__ import annotations

import re

from analyzer import ir
from analyzer.frontend.c_tree import Unsupported
from analyzer.frontend.c_values import LocalRef, LocalStruct, Pointer, Scalar, SharedScalar, Value, _add
from analyzer.frontend.clang.cursors import CK, TK, canonical, children, strip, template_args

_CLASSES = ("BlockReduce", "BlockScan")
_RESULTS = {"BlockReduce": {"Sum", "Reduce"},
            "BlockScan": {"InclusiveSum", "ExclusiveSum", "InclusiveScan", "ExclusiveScan"}}


class ClangCub:
    """cub's block collectives; mixed into ClangLowering."""

    def cub_class(self, c):
        """(class name, element type T, block dimensions) of the cub collective a declaration or an
        expression names through a TYPE_REF (a typedef of `cub::BlockScan<T, N>`), or None."""
        for k in [c] + list(c.walk_preorder()):
            if k.kind != CK.TYPE_REF or k.referenced is None:
                continue
            r = k.referenced
            u = r.underlying_typedef_type if r.kind in (CK.TYPEDEF_DECL, CK.TYPE_ALIAS_DECL) else k.type
            spelling = canonical(u).spelling
            cls = next((n for n in _CLASSES if f"cub::{n}<" in spelling), None)
            if cls is None or not self.in_headers(r if r.kind not in (CK.TYPEDEF_DECL, CK.TYPE_ALIAS_DECL)
                                                   else canonical(u).get_declaration()):
                continue
            args = template_args(spelling, f"cub::{cls}<")
            elem = u.get_template_argument_type(0) if u.get_num_template_arguments() > 0 else None
            if args is None or elem is None or elem.kind == TK.INVALID:
                raise Unsupported(k, f"cub::{cls} of arguments not read ('{spelling}')")
            dims = [args[1], args[3] if len(args) > 3 else "1", args[4] if len(args) > 4 else "1"]
            return cls, elem, [self._cub_dim(x, k) for x in dims]
        return None

    def _cub_dim(self, text: str, at) -> int:
        if re.fullmatch(r"\d+", text):
            return int(text)
        m = re.fullmatch(r"value-parameter-0-(\d+)", text)
        names = getattr(self, "template_params", [])
        if m and int(m.group(1)) < len(names):
            bound = self.template_values.get(names[int(m.group(1))])
            if isinstance(bound, Scalar) and isinstance(bound.expr, ir.Const):
                return int(bound.expr.value)
        raise Unsupported(at, f"a cub collective of a block size that is not a constant ('{text}')")

    def library_local(self, d, shared: bool) -> bool:
        """A local the lowering declares itself: a cub collective's shared `TempStorage`, a Tensor Core
        fragment of a template's type (wmma.py)."""
        if shared:
            return self.cub_temp_storage(d)
        if self.dependent_fragment(d.type):
            self.declare_fragment(d)
            return True
        return False

    def cub_temp_storage(self, d) -> bool:
        """A shared `TempStorage` of a cub collective: BLOCK_DIM_X*Y*Z elements of T. False for any
        other declaration."""
        if "TempStorage" not in d.type.spelling:
            return False
        found = self.cub_class(d)
        if found is None:
            return False
        _, elem, dims = found
        ty = self.note_type(elem)
        size = self.size(ty)
        if not size:
            raise Unsupported(d, f"a cub temporary storage of elements of an unknown size ('{ty}')")
        name = self.fresh_var(d.spelling)
        n = dims[0] * dims[1] * dims[2]
        self.kernel.buffers[name] = ir.Buffer(name, ir.SHARED, ty, size, size_bytes=n * size)
        self.scopes[-1][d.hash] = SharedScalar(Pointer(name, ir.SHARED, ty, ir.Const(0)))
        return True

    def cub_call(self, c, kids) -> Value | None:
        """`Collective(temp).Method(args...)`: the collective, or None for any other call."""
        callee = strip(kids[0]) if kids else None
        if callee is None or callee.kind != CK.MEMBER_REF_EXPR or not children(callee):
            return None
        obj = strip(children(callee)[0])
        found = self.cub_class(obj) if obj.kind in (CK.CXX_FUNCTIONAL_CAST_EXPR, CK.CALL_EXPR,
                                                    CK.UNEXPOSED_EXPR) else None
        if found is None:
            return None
        cls, elem, dims = found
        method = callee.spelling or self.source.text(callee).rsplit(".", 1)[-1].strip()
        if method not in _RESULTS[cls]:
            raise Unsupported(c, f"cub::{cls}::{method} (not modelled)")
        storage = [k for k in obj.walk_preorder() if k.kind == CK.DECL_REF_EXPR and "TempStorage" in k.type.spelling]
        temp = self.value(storage[0]) if storage else None
        temp = temp.ptr if isinstance(temp, SharedScalar) else temp
        if not isinstance(temp, Pointer) or temp.space != ir.SHARED:
            raise Unsupported(c, f"cub::{cls} on a temporary storage that is no shared variable")
        args = list(c.get_arguments()) or [k for k in kids[1:]]
        if not args:
            raise Unsupported(c, f"cub::{cls}::{method} without an input")
        ty = self.note_type(elem)
        size = self.size(ty) or 4
        span = self.span(c)
        dx, dy, _ = dims
        linear = _add(_add(ir.Builtin("tid.x"), ir.BinOp("*", ir.Builtin("tid.y"), ir.Const(dx))),
                      ir.BinOp("*", ir.Builtin("tid.z"), ir.Const(dx * dy)))
        # (a struct input, a local's members, is stored as the slot's bytes of a value not read)
        value = self.rvalue(args[0]) if canonical(args[0].type).kind != TK.RECORD else None
        if value is None:
            arg = strip(args[0])
            while arg.kind == CK.CALL_EXPR and arg.referenced is not None and arg.referenced.kind == CK.CONSTRUCTOR \
                    and len(list(arg.get_arguments())) == 1:   # (the copy made for a parameter by value)
                arg = strip(next(arg.get_arguments()))
            src = self.struct_ref(arg)
            if isinstance(src, SharedScalar):
                src = src.ptr
            if isinstance(src, Pointer):   # a struct input in memory: read where the call is
                self.pending.append(self._access_stmt(src, False, None, self.span(c)))
        outputs = []
        for a in args[1:]:
            # an argument of the element's type a scan may write (its output, the block's aggregate; an
            # initial value taken as written too: an unknown value holds every value); any other (the
            # functor, the number of valid items) read for its effects
            if cls == "BlockScan" and self.note_type(a.type) == ty and strip(a).kind in (
                    CK.DECL_REF_EXPR, CK.ARRAY_SUBSCRIPT_EXPR, CK.MEMBER_REF_EXPR, CK.UNARY_OPERATOR):
                outputs.append(a)
            elif canonical(a.type).kind != TK.RECORD:
                self.rvalue(a)
        slot = Pointer(temp.buffer, ir.SHARED, ty, ir.BinOp("*", linear, ir.Const(size)))
        self.pending.append(self._access_stmt(slot, True, value if isinstance(value, Scalar) else None, span))
        self.pending.append(ir.Barrier(ir.BLOCK, frozenset({ir.SHARED, ir.GLOBAL}), span, f"cub::{cls}::{method}"))
        k = self.fresh_var(f"cub.{method}.k")
        kv = ir.Var(k)
        read = self._access_stmt(Pointer(temp.buffer, ir.SHARED, ty, ir.BinOp("*", kv, ir.Const(size))), False, None,
                                 span)
        n = dims[0] * dims[1] * dims[2]
        self.pending.extend([ir.Assign(k, ir.Const(0), span),
                             ir.Loop([], ir.BinOp("<", kv, ir.Const(n)), [ir.Assign(k, ir.BinOp("+", kv, ir.Const(1)),
                                                                                     span)],
                                     [read], span, next(self.loop_ids))])
        if cls == "BlockReduce":
            return Scalar(self.opaque(f"cub::{cls}::{method} result"), ty)
        if not outputs:
            raise Unsupported(c, f"cub::BlockScan::{method} without an output")
        for a in outputs:
            self._cub_output(a, method, c, span)
        return Scalar(ir.Const(0), "int")

    def _cub_output(self, arg, method, c, span) -> None:
        """A scan's output argument (a local or an element in memory) takes an unknown value."""
        s = strip(arg)
        target = self.value(s) if s.kind == CK.DECL_REF_EXPR else self.place(s)
        if isinstance(target, SharedScalar):
            target = target.ptr
        why = f"cub::BlockScan::{method} result"
        if isinstance(target, LocalRef):
            self.pending.extend(self._assign_local(target, Scalar(self.opaque(why), target.ty), span))
        elif isinstance(target, LocalStruct):
            for path, _, t in self.struct_leaves(self.records[target.ty]):
                if t is None:
                    raise Unsupported(c, f"cub::BlockScan::{method} into a struct with an array member")
                self.pending.append(ir.Assign(f"{target.name}.{path}", self.opaque(why), span))
        elif isinstance(target, Pointer):
            self.pending.append(self._access_stmt(target, True, Scalar(self.opaque(why), target.elem), span))
        else:
            raise Unsupported(c, f"cub::BlockScan::{method} into an output not read")
