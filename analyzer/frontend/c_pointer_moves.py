"""Pointer variables moved under control flow, in the Lark C-family lowering (the clang lowering
has its own, frontend/clang/pointer_moves.py). A pointer is a value of the lowering (a buffer and
a byte offset), rebound where the program assigns it, so `p += 1` emits no statement. That holds
in straight-line code only: a loop's body is lowered once, so every iteration read the offset the
pointer had on entry (`for (...) { *p = v; p += 1; }` wrote one element), and a branch's move was
either lost or leaked past the `if`. Races between the threads' runs of elements went unseen.

Here a pointer that a loop, a branch or a `switch` may move holds its offset in a variable of the
IR, set before the construct and again at each move inside it; the executor then carries it like
any loop state or merged branch value. A move inside to another buffer is `unknown`, and so is a
move after a `goto` (which may skip it)."""

from __future__ import annotations

from dataclasses import replace

from lark import Tree

from analyzer import ir
from analyzer.frontend.c_tree import Unsupported, kind
from analyzer.frontend.c_values import Pointer


def _own_target(n: Tree) -> str | None:
    """The plain name `n` itself assigns or steps (`p = ..`, `p += ..`, `p++`, `--p`), if any."""
    k = kind(n)
    target = n.children[0] if k in ("assign", "post_incdec") else n.children[1] if k == "pre_incdec" else None
    return str(target.children[0]) if isinstance(target, Tree) and kind(target) == "name" else None


class PointerMoves:
    """Offsets held in IR variables for pointers moved under control flow; mixed into CLowering."""

    def _pointer_scope(self, name: str) -> dict | None:
        for scope in reversed(self.scopes):
            if name in scope:
                return scope if isinstance(scope[name], Pointer) else None
        return None

    def moved_names(self, nodes) -> list[str]:
        """The plain names the parse trees `nodes` assign or step, each subtree's found once per file
        (bottom up, no recursion): nested loops ask again of what an outer one walked."""
        memo = self.__dict__.setdefault("_moved_memo", {})   # id -> (node, names): the node kept alive
        out: dict = {}
        for node in nodes:
            if not isinstance(node, Tree):
                continue
            stack = [(node, False)]
            while stack:
                n, ready = stack.pop()
                if id(n) in memo:
                    continue
                kids = [c for c in n.children if isinstance(c, Tree)]
                if not ready:
                    stack.append((n, True))
                    stack.extend((c, False) for c in kids)
                    continue
                names = dict.fromkeys([t] if (t := _own_target(n)) else [])
                for c in kids:
                    names.update(dict.fromkeys(memo[id(c)][1]))
                memo[id(n)] = (n, tuple(names))
            out.update(dict.fromkeys(memo[id(node)][1]))
        return list(out)

    def hold_moved_pointers(self, nodes, span) -> list[ir.Stmt]:
        """Before a loop, branch or switch made of the parse trees `nodes`: each pointer variable they
        may move is rebound to an offset held in a fresh variable, set here to its offset on entry."""
        out = []
        for name in self.moved_names(nodes):
            scope = self._pointer_scope(name)
            if scope is None or ("held", name) in scope:
                continue
            ptr = scope[name]
            if ptr.buffer == "?":
                raise Unsupported(next(n for n in nodes if isinstance(n, Tree)), f"pointer '{name}' first assigned inside a loop or a branch")
            var = self.fresh_var(f"{name}.moved")
            out.append(ir.Assign(var, ptr.offset, span))
            scope[("held", name)] = var   # beside the name: gone with its scope
            scope[name] = replace(ptr, offset=ir.Var(var), bounds=(), row=None, shape_at=None)
        return out

    def move_pointer(self, name: str, val: Pointer, target, span) -> list[ir.Stmt]:
        """`name = val` for a pointer variable: rebound where it was declared (a nested block's end
        does not undo it); where its offset is held, the variable takes the new offset."""
        scope = self._pointer_scope(name)
        if scope is None:   # (not a variable of a scope: as the innermost's)
            scope = self.scopes[-1]
        var = scope.get(("held", name))
        if var is None:
            if getattr(self, "after_goto", False):   # the move may be one a forward goto skips
                raise Unsupported(target, f"pointer '{name}' moved after a goto")
            scope[name] = val
            return []
        held = scope[name]
        if (val.buffer, val.space) != (held.buffer, held.space):
            raise Unsupported(target, f"pointer '{name}' moved to another buffer inside a loop or a branch")
        scope[name] = replace(val, offset=ir.Var(var), bounds=(), row=None, shape_at=None)
        return [ir.Assign(var, val.offset, span)]
