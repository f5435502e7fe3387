"""Array dimensions past the first that are symbolic: `__shared__ half s[STAGES][BM][BK + PAD]` in a
template kernel checked with its non-type parameters symbolic (no launch instantiates it).

Such an extent is kept as the IR expression of the dimension (of parameters and constants: C++
makes a dimension a constant expression, so it reads no memory), and a subscript's stride is the
product of the extents inside it, an expression where one is symbolic. The array's size in bytes
is then not known (no out-of-bounds check on it), and no subscript through such a dimension is
given a bound (Access.bounds holds constant extents only)."""

from __future__ import annotations

from analyzer import ir
from analyzer.frontend.c_tree import Unsupported
from analyzer.frontend.c_values import _mul, const_int


def dimension_extents(lowering, d, extents: list, dim_exprs: list, init, incomplete: bool) -> tuple[list, list[ir.Stmt]]:
    """Completes `extents` (outermost first, from the declaration's type) where clang computed one
    from a symbolic value (a template parameter, a missing macro) or could not compute it: the
    dimension expressions say. Returns the expressions aligned with the extents they give and the
    statements to run first. clang lists the element type's expressions first (a fragment's
    `<..., M, N, K>`), then the dimensions innermost first, none for an outermost `[]`."""
    pre: list[ir.Stmt] = []
    sized = len(extents) - (1 if incomplete else 0)
    dims = list(reversed(dim_exprs[len(dim_exprs) - sized:])) if 0 < sized <= len(dim_exprs) else []
    for i, e in enumerate(dims, len(extents) - len(dims)):
        if extents[i] is not None and not lowering.mentions_symbol(e):
            continue
        value = lowering.cond(e)
        n = const_int(value)
        if n is None and i > 0:   # an inner dimension of a symbolic extent
            if init is not None:
                raise Unsupported(e, "initializer of an array with a symbolic inner dimension")
            stmts, n = symbolic_extent(lowering, value, e, lowering.span(d))
            pre += stmts
        extents[i] = n
    if None in extents[1:]:   # (a stride needs every inner extent)
        raise Unsupported(d, "array dimension that is not a constant")
    return dims, pre


def symbolic_extent(lowering, e: ir.Expr, at, span) -> tuple[list[ir.Stmt], ir.Expr]:
    """The extent a dimension's expression gives, where it is not a constant: the expression, or
    where it names a local (a `constexpr int BM` computed from the parameters) the local's value
    where the array is declared, kept in a fresh variable (statements to run first)."""
    if ir.reads_memory(e) or any(isinstance(x, ir.Opaque) for x in _nodes(e)):
        raise Unsupported(at, "array dimension that is neither a constant nor a parameter's value")
    if any(isinstance(x, ir.Var) for x in _nodes(e)):
        name = lowering.fresh_var("extent")
        return [ir.Assign(name, e, span)], ir.Var(name)
    return [], e


def stride(elem_size: int, inner) -> int | ir.Expr:
    """Bytes between two elements of the outermost dimension left: the element's size times each
    inner extent (an expression where one is symbolic)."""
    out: int | ir.Expr = elem_size
    for n in inner:
        if n is None:
            continue   # (an extent not known is never an inner one: declare_array refuses it)
        if isinstance(out, int) and isinstance(n, int):
            out *= n
        else:
            out = ir.BinOp("*", ir.Const(out) if isinstance(out, int) else out, ir.Const(n) if isinstance(n, int) else n)
    return out


def scaled(idx: ir.Expr, by: int | ir.Expr) -> ir.Expr:
    return _mul(idx, by) if isinstance(by, int) else ir.BinOp("*", idx, by)


def _nodes(e):
    yield e
    for x in ir.operands(e):
        yield from _nodes(x)
