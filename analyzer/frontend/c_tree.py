"""Parse-tree helpers for the C-family lowering, and the error for a construct it refuses.

Separate so that every piece of the lowering reads the tree the same way, and raises the same
error (the SPIR-V lowering raises it too), without importing the lowering that composes them.
"""

from __future__ import annotations

from lark import Token, Tree

_PREFIX = "c_core__"


def kind(t: Tree) -> str:
    d = t.data
    return d[len(_PREFIX):] if d.startswith(_PREFIX) else d


def tokens_of(node) -> list[Token]:
    """The tokens under a node, in order, walked with a stack: Lark's scan_values recurses once
    per level and a hostile file can nest thousands of levels."""
    out: list[Token] = []
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, Tree):
            stack.extend(reversed(n.children))
        elif isinstance(n, Token):
            out.append(n)
    return out


def position(node) -> tuple[int, int]:
    """(line, column) of a node's first token. Computed on demand for the few nodes that need a
    span: Lark's propagate_positions would do it for every node and double the parse time."""
    while isinstance(node, Tree):
        node = next((c for c in node.children if c is not None), None)
    if isinstance(node, Token) and node.line is not None:
        return node.line, node.column
    return 0, 0


class Unsupported(Exception):
    def __init__(self, node, what: str):
        super().__init__(what)
        self.node = node
        self.what = what
