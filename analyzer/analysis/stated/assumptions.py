"""Stated launch and parameter facts: `--assume 'H >= blockDim.y'`, `assume = [...]` in the
configuration, and `// kernelrace: assume EXPR` lines in a kernel's source.

An assumption is a C expression over the kernel's scalar parameters and the launch extents
(`blockDim.x`, `gridDim.y`, ...); the analysis adds it to every query, as `__builtin_assume`
would, and the output names it. Buffer contracts (`indptr:nondecreasing`) share the flag and
the configuration key: the two are told apart by their form (contracts.py reads `BUFFER:PROPERTY`).
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from analyzer import ir

_EXTENTS = {"blockDim": "bdim", "gridDim": "gdim"}
_OPS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.Mod: "%", ast.LShift: "<<",
        ast.RShift: ">>", ast.BitAnd: "&", ast.BitOr: "|", ast.BitXor: "^"}
_CMP = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==", ast.NotEq: "!="}
# `// kernelrace: assume EXPR` anywhere in a source line.
SOURCE_LINE = re.compile(r"//\s*kernelrace:\s*assume\s+(?P<expr>.+?)\s*$")


@dataclass(frozen=True)
class Assumption:
    """A stated fact: its text, where it was stated, and the parameter names it reads."""
    text: str
    origin: str
    expr: ir.Expr
    names: frozenset[str]

    def __str__(self) -> str:
        return self.text


def looks_like_expression(text: str) -> bool:
    """A comparison (`H >= blockDim.y`), not a buffer contract (`indptr:nondecreasing`)."""
    return ":" not in text and any(c in text for c in "<>=!&|")


def parse(text: str, origin: str = "--assume") -> Assumption:
    """The assumption `text` states; a ValueError with a one-line reason when it is not a C
    comparison over names, integers and launch extents."""
    py = text.strip().replace("&&", " and ").replace("||", " or ")
    py = re.sub(r"!(?!=)", " not ", py)
    try:
        tree = ast.parse(py, mode="eval").body
    except SyntaxError:
        raise ValueError(f"'{text}': expected a C expression over parameters and blockDim/gridDim "
                         f"(e.g. 'H >= blockDim.y')") from None
    names: set[str] = set()
    expr = _lower(tree, text, names)
    return Assumption(text.strip(), origin, expr, frozenset(names))


def _lower(node, text: str, names: set[str]) -> ir.Expr:
    if isinstance(node, ast.Constant) and isinstance(node.value, int) and not isinstance(node.value, bool):
        return ir.Const(node.value)
    if isinstance(node, ast.Name):
        names.add(node.id)
        return ir.Param(node.id)
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in _EXTENTS \
            and node.attr in ("x", "y", "z"):
        return ir.Builtin(f"{_EXTENTS[node.value.id]}.{node.attr}")
    if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
        return ir.BinOp(_OPS[type(node.op)], _lower(node.left, text, names), _lower(node.right, text, names))
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return ir.UnOp("-", _lower(node.operand, text, names))
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        return ir.UnOp("!", _lower(node.operand, text, names))
    if isinstance(node, ast.BoolOp):
        op = "&&" if isinstance(node.op, ast.And) else "||"
        out = _lower(node.values[0], text, names)
        for v in node.values[1:]:
            out = ir.BinOp(op, out, _lower(v, text, names))
        return out
    if isinstance(node, ast.Compare):
        # `0 < n <= 4096` as in mathematics (C would compare a truth value): both comparisons.
        out, left = None, _lower(node.left, text, names)
        for op, right_node in zip(node.ops, node.comparators):
            if type(op) not in _CMP:
                break
            right = _lower(right_node, text, names)
            one = ir.BinOp(_CMP[type(op)], left, right)
            out = one if out is None else ir.BinOp("&&", out, one)
            left = right
        else:
            return out
    raise ValueError(f"'{text}': expected a C expression over parameters and blockDim/gridDim (e.g. 'H >= blockDim.y')")


def in_source(lines: list[str], file: str) -> list[Assumption]:
    """The `// kernelrace: assume EXPR` lines of a kernel's source."""
    out = []
    for i, line in enumerate(lines, 1):
        m = SOURCE_LINE.search(line)
        if m:
            try:
                out.append(parse(m.group("expr"), f"{file}:{i}"))
            except ValueError as exc:
                raise ValueError(f"{file}:{i}:{m.start('expr') + 1}: kernelrace: assume {exc}") from None
    return out


def apply(kernel: ir.Kernel, assumptions) -> None:
    """Give `kernel` the assumptions whose names are all its scalar parameters."""
    params = set(kernel.params)
    for a in assumptions:
        if a.names <= params and all(a.text != t for t, _ in kernel.assumptions):
            kernel.assumptions.append((a.text, a.expr))
