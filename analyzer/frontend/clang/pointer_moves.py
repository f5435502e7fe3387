"""Pointer variables moved under control flow, in the clang lowering. A pointer is a value of the
lowering (a buffer and a byte offset), rebound where the program assigns it, so `p += 1` emits no
statement. Inside a loop that is one iteration's move: every iteration then read the offset the
pointer had on entry (`for (...) { *p = v; p += 1; }` wrote one element, and a race between the
threads' runs of elements went unseen). Here a pointer a loop moves holds its offset in a variable
of the loop's state, set on entry and after each iteration; one a branch moves is, after the `if`,
the offset the taken branch left (`c ? then : else`). Mixed into ClangLowering."""

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

    def carry_pointers(self, c) -> tuple[list[ir.Stmt], dict]:
        """On entry to loop `c`: each pointer it moves rebound to its offset held in a variable (set
        here to the entry offset). Returns the statements and what carried_update needs."""
        carried, pre = {}, []
        # (and the pointer members of the local structs it names, which a member function may move)
        keys = self._moved_targets(c) + self.carried_member_keys(c)
        for key in keys:
            ptr = self._bound(key)
            var = self.fresh_var(f"{ptr.buffer}.moved")
            pre.append(ir.Assign(var, ptr.offset, self.span(c)))
            carried[key] = (var, ptr)
            self._rebind_key(key, replace(ptr, offset=ir.Var(var), bounds=(), row=None, shape_at=None))
        return pre, carried

    def carried_update(self, c, carried: dict) -> list[ir.Stmt]:
        """After an iteration: each carried pointer's offset, where the iteration left it, into its
        variable; the pointer is then its variable again (after the loop: where the last left it)."""
        out = []
        for key, (var, entry) in carried.items():
            now = self._bound(key)
            if not isinstance(now, Pointer) or (now.buffer, now.space) != (entry.buffer, entry.space):
                raise Unsupported(c, "a pointer a loop moves to another buffer")
            if now.offset == ir.Var(var):
                continue   # not moved: its variable holds the entry offset throughout
            if any(n.kind == CK.CONTINUE_STMT for n in c.walk_preorder()):
                raise Unsupported(c, "a pointer moved in a loop with `continue` (its offset at the `continue` is not "
                                     "carried)")
            out.append(ir.Assign(var, now.offset, self.span(c)))
            self._rebind_key(key, replace(now, offset=ir.Var(var), bounds=(), row=None, shape_at=None))
        return out

    def _rebind_key(self, key, val) -> None:
        for scope in reversed(self.scopes):
            if key in scope:
                scope[key] = val
                return

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
