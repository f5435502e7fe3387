"""Pointers chosen between two buffers: `const half *p = warp < 4 ? &A[i] : &B[j];`.

The IR has no select between buffers, so such a pointer is a buffer name of its own (`?chosen...`)
that stands for the choice: its condition is kept in a fresh variable where the pointer is made
(the condition's later changes do not move it), and its offset is `Select(choice, offset in A,
offset in B)`, which pointer arithmetic moves as any offset. Every access through it is an `If` on
the choice, with the access to the first buffer in one branch and to the second in the other, each
offset resolved for its side: each access is made only where the program makes it. An access the
lowering makes some other way (an atomic, an asynchronous copy) is `unknown` (make_access refuses
the name)."""

from __future__ import annotations

from dataclasses import replace

from analyzer import ir
from analyzer.frontend.c_values import Pointer, Scalar

CHOSEN = "?chosen"


def is_chosen(buffer: str) -> bool:
    return buffer.startswith(CHOSEN)


def resolve(e, choice: str, side: bool):
    """`e` with every `Select` on the choice variable replaced by its `side` branch."""
    if isinstance(e, ir.Select):
        if e.cond == ir.Var(choice):
            return resolve(e.a if side else e.b, choice, side)
        return ir.Select(resolve(e.cond, choice, side), resolve(e.a, choice, side), resolve(e.b, choice, side))
    if isinstance(e, ir.BinOp):
        return ir.BinOp(e.op, resolve(e.a, choice, side), resolve(e.b, choice, side))
    if isinstance(e, ir.UnOp):
        return ir.UnOp(e.op, resolve(e.a, choice, side))
    if isinstance(e, ir.Call):
        return replace(e, args=tuple(resolve(a, choice, side) for a in e.args))
    return e


def _null(v) -> bool:
    return isinstance(v, Scalar) and isinstance(v.expr, ir.Const) and v.expr.value == 0


class ClangChosen:
    """Mixed into ClangLowering: making a chosen pointer, and the accesses through one."""

    def chosen_pointers(self) -> dict:
        """name -> (choice variable, pointer when it holds, pointer when not), per kernel."""
        table = getattr(self, "_chosen", None)
        if table is None or table[0] is not self.kernel:
            self._chosen = table = (self.kernel, {})
        return table[1]

    def pointer_choice(self, cond: ir.Expr, a, b, pre: tuple, span) -> Pointer | None:
        """`cond ? a : b` where it is a pointer: of one buffer, a selected offset; of two, a chosen
        pointer; `p ? p + off : NULL`, the pointer (an access through the null one would be a bug of
        its own; every access the code makes through it is checked)."""
        plain = not pre[0] and not pre[1]
        if isinstance(a, Pointer) and isinstance(b, Pointer) and a.buffer == b.buffer and plain:
            return replace(a, offset=ir.Select(cond, a.offset, b.offset))
        if (chosen := self.choose(cond, a, b, pre, span)) is not None:
            return chosen
        if plain and (isinstance(a, Pointer) and _null(b) or isinstance(b, Pointer) and _null(a)):
            return a if isinstance(a, Pointer) else b
        return None

    def choose(self, cond: ir.Expr, a, b, guarded_pre: tuple, span) -> Pointer | None:
        """The pointer `cond ? a : b` of two different buffers, or None where the two are not
        pointers of two buffers with one shape (element type, rows). `guarded_pre`: the statements
        computing each branch, which run only on their side."""
        if not (isinstance(a, Pointer) and isinstance(b, Pointer)) or a.buffer == b.buffer:
            return None
        if a.elem != b.elem or a.inner != b.inner or "?" in (a.buffer, b.buffer):
            return None
        choice = self.fresh_var("chosen")
        self.pending.append(ir.Assign(choice, cond, span))
        a_pre, b_pre = guarded_pre
        if a_pre or b_pre:
            self.pending.append(ir.If(ir.Var(choice), list(a_pre), list(b_pre), span))
        name = f"{CHOSEN}:{choice}"
        self.chosen_pointers()[name] = (choice, a, b)
        return Pointer(name, a.space if a.space == b.space else ir.GLOBAL, a.elem,
                       ir.Select(ir.Var(choice), a.offset, b.offset), a.inner)

    def _sides(self, ptr: Pointer):
        choice, a, b = self.chosen_pointers()[ptr.buffer]
        on = [(side, replace(ptr, buffer=alt.buffer, space=alt.space,
                             offset=resolve(ptr.offset, choice, side), bounds=(), row=None, shape_at=None))
              for side, alt in ((True, a), (False, b))]
        return choice, on

    def chosen_access(self, ptr: Pointer, is_write: bool, val, span, atomic=False) -> ir.Stmt:
        """A store (or an access statement) through a chosen pointer: one branch per buffer."""
        choice, ((_, pa), (_, pb)) = self._sides(ptr)
        return ir.If(ir.Var(choice), [self._access_stmt(pa, is_write, val, span, atomic)],
                     [self._access_stmt(pb, is_write, val, span, atomic)], span)

    def chosen_load(self, ptr: Pointer, span):
        """A load through a chosen pointer: each buffer read on its side, into fresh variables."""
        choice, ((_, pa), (_, pb)) = self._sides(ptr)
        va, vb = self.load(pa, span), self.load(pb, span)
        comps_a = va.comps if hasattr(va, "comps") else (va.expr,)
        comps_b = vb.comps if hasattr(vb, "comps") else (vb.expr,)
        names = [self.fresh_var("chosen.read") for _ in comps_a]
        self.pending.append(ir.If(ir.Var(choice), [ir.Assign(n, e, span) for n, e in zip(names, comps_a)],
                                  [ir.Assign(n, e, span) for n, e in zip(names, comps_b)], span))
        if hasattr(va, "comps"):
            return replace(va, comps=tuple(ir.Var(n) for n in names))
        return Scalar(ir.Var(names[0]), va.ty)

    # the lowering's two ways to access memory, taking a chosen pointer apart first
    def load(self, ptr: Pointer, span):
        if is_chosen(ptr.buffer):
            return self.chosen_load(ptr, span)
        return super().load(ptr, span)

    def _access_stmt(self, ptr: Pointer, is_write: bool, val, span, atomic=False):
        if is_chosen(ptr.buffer):
            return self.chosen_access(ptr, is_write, val, span, atomic)
        return super()._access_stmt(ptr, is_write, val, span, atomic)
