"""Where in the builder's own Python a built kernel's accesses were written.

TVMScript keeps each statement's Python file and line (its `span`) on the TIR, and TVM's lowering
passes carry the span of a buffer store they rewrite into the device PrimFunc. The emitted CUDA,
Metal or WGSL carries no line information, so a finding's access (a buffer name and whether it
reads or writes) is mapped back through the device TIR: when exactly one spanned statement of the
device code reads (or writes) that buffer, its Python line is the access's line in the builder.
Anything else (no span: a `te` or dlight-scheduled builder; several statements) maps to nothing,
and the report falls back to the builder function's own `def` line.
"""

from __future__ import annotations

import inspect
from typing import Any, Callable

Site = tuple[str, int, int]   # (file, line, col); col 0 when unknown

# The fields of TIR expressions and statements that hold sub-expressions (the wheel has no
# Python visitor for tirx, so the walk names them).
_EXPR_FIELDS = ("a", "b", "value", "condition", "true_value", "false_value", "args", "indices",
                "predicate", "base", "stride", "lanes", "vectors", "source", "body", "min", "extent")
_STMT_CHILDREN = ("body", "then_case", "else_case", "block", "rest")


def _names(buffer) -> set[str]:
    """A buffer's names in emitted code: the buffer's and its data pointer's (a Var before lowering)."""
    out = set()
    for obj in (buffer, getattr(buffer, "data", None)):
        for attr in ("name", "name_hint"):
            name = getattr(obj, attr, None) if obj is not None else None
            if isinstance(name, str) or (name is not None and not callable(name)):
                out.add(str(name))
    return out


def _loads(expr, out: set[str], depth: int = 0) -> None:
    """Names of the buffers an expression loads (bounded: expressions are trees, not graphs)."""
    if expr is None or depth > 200 or isinstance(expr, (int, float, str, bool)):
        return
    if type(expr).__name__ in ("BufferLoad", "TensorLoad"):   # TensorLoad: a load before lowering
        out |= _names(getattr(expr, "buffer", None) or getattr(expr, "source", None))
    if isinstance(expr, (list, tuple)) or type(expr).__name__ == "Array":
        for x in expr:
            _loads(x, out, depth + 1)
        return
    if _is_stmt(expr):
        return          # a statement's own statements are walked as statements
    for name in _EXPR_FIELDS:
        child = getattr(expr, name, None)
        if child is not None and not callable(child):
            _loads(child, out, depth + 1)


def _is_stmt(node) -> bool:
    import tvm

    return isinstance(node, tvm.tirx.Stmt)


def _span(node) -> Site | None:
    span = getattr(node, "span", None)
    source = getattr(span, "source_name", None) if span is not None else None
    if source is None or not getattr(span, "line", 0):
        return None
    name = str(source.name)
    if not name.endswith(".py"):
        return None
    return (name, int(span.line), int(getattr(span, "column", 0) or 0))


def _statement_accesses(stmt) -> list[tuple[str, str]]:
    """(buffer, kind) of what one statement itself reads and writes."""
    out: list[tuple[str, str]] = []
    reads: set[str] = set()
    if type(stmt).__name__ == "BufferStore":
        out += [(n, "write") for n in sorted(_names(stmt.buffer))]
        _loads(stmt.value, reads)
        _loads(stmt.indices, reads)
    else:
        for name in ("value", "condition", "min", "extent"):
            _loads(getattr(stmt, name, None), reads)
    return out + [(n, "read") for n in sorted(reads)]


def walk(node, visit: Callable[[Any], None]) -> None:
    """Pre-order walk over TIR statements (the wheel exposes no Python visitor for tirx)."""
    stack = [node]
    while stack:
        n = stack.pop()
        if n is None:
            continue
        visit(n)
        seq = getattr(n, "seq", None)
        if seq is not None:
            stack.extend(reversed(list(seq)))
        for attr in _STMT_CHILDREN:
            child = getattr(n, attr, None)
            if child is not None and _is_stmt(child):
                stack.append(child)


def access_sites(device: dict) -> dict[tuple[str, str], tuple[Site, ...]]:
    """(buffer, "read"/"write") -> the distinct Python lines of the device TIR's spanned statements
    that access it, over every device function of the `{Target: IRModule}` split."""
    found: dict[tuple[str, str], set[Site]] = {}

    def visit(n):
        site = _span(n)
        if site is not None:
            for key in _statement_accesses(n):
                found.setdefault(key, set()).add(site)

    for dev_mod in device.values():
        for _, func in dev_mod.functions.items():
            walk(func.body, visit)
    return {k: tuple(sorted(v)) for k, v in sorted(found.items())}


def definition(fn) -> Site | None:
    """The builder function's `def` line (the decorated function's own when wrapped)."""
    try:
        fn = inspect.unwrap(fn)
        file = inspect.getsourcefile(fn)
        _, line = inspect.getsourcelines(fn)
    except (TypeError, OSError):
        return None
    return (file, line, 0) if file else None


def locate(results, mod) -> None:
    """Give each finding of a build's results its accesses' builder lines (`Location.builder_line`,
    where exactly one line of the builder reads or writes the buffer so) and the builder's `def`
    line (`Finding.builder_def`). Run on every result, cached ones too: the cache keys a build by its
    emitted source, which does not change when the builder's lines move."""
    for r in results:
        for f in r.findings:
            for loc in (f.first, f.second):
                if loc is None:
                    continue
                kinds = ("read", "write") if loc.kind == "atomic" else (loc.kind,)
                found = {s for k in kinds for s in mod.sites.get((loc.buffer or "", k), ())}
                loc.builder_line = found.pop() if len(found) == 1 else None
            f.builder_def = mod.builder_def
