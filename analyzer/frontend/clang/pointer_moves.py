"""Pointer variables moved under control flow, in the clang lowering. A pointer is a value of the
lowering (a buffer and a byte offset), rebound where the program assigns it, so `p += 1` emits no
statement. Inside a loop that is one iteration's move: every iteration then read the offset the
pointer had on entry (`for (...) { *p = v; p += 1; }` wrote one element, and a race between the
threads' runs of elements went unseen), and a switch's case moved it for every path. Here a
pointer a loop or a switch may move holds its offset in a variable, set on entry and at each move;
one a branch moves is, after the `if`, the offset the taken branch left (`c ? then : else`); a move
after a goto is `unknown` (the goto may skip it), and so is a move of a pointer passed by reference
(`T *&p`) inside the function it is passed to. Mixed into ClangLowering; the Lark lowering's
counterpart is frontend/c_pointer_moves.py."""

from __future__ import annotations

from dataclasses import replace

from analyzer import ir
from analyzer.frontend.c_tree import Unsupported
from analyzer.frontend.c_values import Pointer
from analyzer.frontend.clang.cursors import CK, children, strip
from analyzer.frontend.clang.reader import unary_op

_MOVES = frozenset({"operator=", "operator+=", "operator-=", "operator++", "operator--"})


class ClangPointerMoves:
    """Loop-carried and branch-merged pointer offsets; mixed into ClangLowering."""

    def _bound(self, key):
        for scope in reversed(self.scopes):
            if key in scope:
                return scope[key]
        return None

    def _moved_targets(self, c) -> list:
        """The variables bound to pointers that statement `c` assigns or steps, in order."""
        keys = []
        for n in c.walk_preorder():
            target = None
            if n.kind == CK.BINARY_OPERATOR and n.binary_operator.name == "Assign" or \
                    n.kind == CK.COMPOUND_ASSIGNMENT_OPERATOR:
                target = children(n)[0]
            elif n.kind == CK.UNARY_OPERATOR and unary_op(n) in ("pre++", "pre--", "post++", "post--"):
                target = children(n)[0]
            elif n.kind == CK.CALL_EXPR and n.spelling in _MOVES or n.kind == CK.CALL_EXPR and n.referenced is None:
                refs = [k for k in children(n) if strip(k).kind == CK.DECL_REF_EXPR and strip(k).spelling]
                ops = [k for k in children(n) if k.kind == CK.DECL_REF_EXPR and not k.spelling and any(
                    x.spelling in _MOVES for x in children(k))]
                target = refs[0] if refs and (ops or n.spelling in _MOVES) else None
            if target is None:
                continue
            t = strip(target)
            if t.kind == CK.DECL_REF_EXPR and t.referenced is not None and \
                    isinstance(self._bound(t.referenced.hash), Pointer) and t.referenced.hash not in keys:
                keys.append(t.referenced.hash)
        return keys

    def carry_pointers(self, c) -> list[ir.Stmt]:
        """Before loop or switch `c`: each pointer it may move holds its offset in a variable, set
        here to the entry offset; every move after this sets it again (see `rebind`), so the
        offset is right at a `continue`, a `break` and the end of any iteration alike."""
        pre = []
        # (and the pointer members of the local structs it names, which a member function may move)
        for key in self._moved_targets(c) + self.carried_member_keys(c):
            scope = next((s for s in reversed(self.scopes) if key in s), None)
            if scope is None or ("held", key) in scope or not isinstance(scope[key], Pointer):
                continue
            ptr = scope[key]
            var = self.fresh_var(f"{ptr.buffer}.moved")
            pre.append(ir.Assign(var, ptr.offset, self.span(c)))
            scope[("held", key)] = var   # beside the binding: gone with its scope
            scope[key] = replace(ptr, offset=ir.Var(var), bounds=(), row=None, shape_at=None)
        return pre

    def rebind(self, decl_ref, val, span) -> list[ir.Stmt]:
        """`p = val` for a pointer variable, rebound where it was declared; where its offset is
        held in a variable, that variable takes the new offset."""
        key = decl_ref.referenced.hash
        scope = next((s for s in reversed(self.scopes) if key in s), self.scopes[-1])
        if scope.get(("byref", key)):   # `T *&p`: the move would be the caller's variable's
            raise Unsupported(decl_ref, "a pointer passed by reference, moved by the function it is passed to")
        var = scope.get(("held", key))
        if var is None:
            if self.after_goto:   # the move may be one a forward goto skips
                raise Unsupported(decl_ref, "a pointer moved after a goto")
            scope[key] = val
            return []
        held = scope[key]
        if not isinstance(val, Pointer) or (val.buffer, val.space) != (held.buffer, held.space):
            raise Unsupported(decl_ref, "a pointer a loop or a switch moves to another buffer")
        scope[key] = replace(val, offset=ir.Var(var), bounds=(), row=None, shape_at=None)
        return [ir.Assign(var, val.offset, span)]

    # ---------- branches ----------

    def branches(self, c, cond: ir.Expr, then_c, else_c) -> tuple[list[ir.Stmt], list[ir.Stmt]]:
        """An `if`'s two branches, each from the bindings before it; after them, a pointer either moved
        is where the taken one left it."""
        state = self.pointer_state()
        self.scopes.append({})
        then = self.stmt(then_c)
        self.scopes.pop()
        then_state = self.restore_pointers(state)
        self.scopes.append({})
        orelse = self.stmt(else_c) if else_c is not None else []
        self.scopes.pop()
        self.merge_pointers(c, cond, then_state)
        return then, orelse

    def pointer_state(self) -> list[dict]:
        return [dict(s) for s in self.scopes]

    def restore_pointers(self, state: list[dict]) -> list[dict]:
        """The bindings of the scopes open at `state` as they are now, and those scopes put back."""
        now = [dict(s) for s in self.scopes[:len(state)]]
        for scope, saved in zip(self.scopes, state):
            scope.clear()
            scope.update(saved)
        return now

    def merge_pointers(self, c, cond: ir.Expr, then_state: list[dict]) -> None:
        """After an `if`: a pointer either branch moved is the offset the taken branch left (the
        scopes now hold the else branch's bindings)."""
        for scope, then in zip(self.scopes, then_state):
            for key, t in then.items():
                e = scope.get(key)
                if t is e or t == e or not isinstance(t, Pointer) and not isinstance(e, Pointer):
                    continue
                if not (isinstance(t, Pointer) and isinstance(e, Pointer)) or \
                        (t.buffer, t.space, t.elem, t.inner) != (e.buffer, e.space, e.elem, e.inner):
                    raise Unsupported(c, "a pointer a branch moves to another buffer or type")
                scope[key] = replace(e, offset=ir.Select(cond, t.offset, e.offset), bounds=(), row=None, shape_at=None)
