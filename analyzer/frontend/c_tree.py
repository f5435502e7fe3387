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


def lower_by_kind(lowering, node, k: str, prefix: str, what: str, limit: int):
    """Lower `node` with `lowering`'s `prefix_K` method, one nesting level deeper (at most
    `limit`); an Unsupported raised without a node is placed at this, the innermost, node. The
    dispatch every front end's lowering shares."""
    method = getattr(lowering, f"{prefix}_{k}", None)
    if method is None:
        raise Unsupported(node, f"{what} '{k}'")
    if lowering.nesting >= limit:
        raise Unsupported(node, f"statements and expressions nested too deeply (more than {limit} levels)")
    lowering.nesting += 1
    try:
        return method(node)
    except Unsupported as exc:
        if exc.node is None:
            exc.node = node
        raise
    finally:
        lowering.nesting -= 1
