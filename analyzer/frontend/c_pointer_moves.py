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


def _moved_names(node) -> list[str]:
    """The plain names that `node` assigns or steps (`p = ..`, `p += ..`, `p++`, `--p`), in order."""
    names: list[str] = []
    if not isinstance(node, Tree):
        return names
    for n in node.iter_subtrees_topdown():
        k = kind(n)
        target = None
        if k == "assign":
            target = n.children[0]
        elif k == "pre_incdec":
            target = n.children[1]
        elif k == "post_incdec":
            target = n.children[0]
        if isinstance(target, Tree) and kind(target) == "name":
            name = str(target.children[0])
            if name not in names:
                names.append(name)
    return names


class PointerMoves:
    """Offsets held in IR variables for pointers moved under control flow; mixed into CLowering."""

    def _pointer_scope(self, name: str) -> dict | None:
        for scope in reversed(self.scopes):
            if name in scope:
                return scope if isinstance(scope[name], Pointer) else None
        return None

    def hold_moved_pointers(self, node, span) -> list[ir.Stmt]:
        """Before a loop, branch or switch `node`: each pointer variable it may move is rebound to
        an offset held in a fresh variable, set here to its offset on entry."""
        out = []
        for name in _moved_names(node):
            scope = self._pointer_scope(name)
            if scope is None or ("held", name) in scope:
                continue
            ptr = scope[name]
            if ptr.buffer == "?":
                raise Unsupported(node, f"pointer '{name}' first assigned inside a loop or a branch")
            var = self.fresh_var(f"{name}.moved")
            out.append(ir.Assign(var, ptr.offset, span))
            scope[("held", name)] = var   # beside the name: gone with its scope
            scope[name] = replace(ptr, offset=ir.Var(var), bounds=(), row=None, shape_at=None)
        return out

    def move_pointer(self, name: str, val: Pointer, target, span) -> list[ir.Stmt]:
        """`name = val` for a pointer variable: rebound where it was declared (a nested block's end
        does not undo it); where its offset is held, the variable takes the new offset."""
        scope = self._pointer_scope(name)
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
