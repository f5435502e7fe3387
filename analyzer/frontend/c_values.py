"""The typed values the C-family lowering produces while lowering expressions, declared types,
and the folding of the byte offsets pointers carry.

Just enough typing to turn pointer arithmetic, casts and vector accesses into byte-addressed
accesses of a named buffer; every piece of the lowering passes these around, so they stand alone.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from analyzer import ir


@dataclass(frozen=True)
class Scalar:
    expr: ir.Expr
    ty: str = "int"


@dataclass(frozen=True)
class Vector:
    comps: tuple[ir.Expr, ...]
    ty: str


@dataclass(frozen=True)
class Pointer:
    buffer: str
    space: str
    elem: str           # pointee type
    offset: ir.Expr     # bytes from the buffer's base
    inner: tuple[int, ...] = ()  # remaining dimensions of a multi-dimensional array
    # Subscripts of fixed-size dimensions on the way here, each with its extent (ir.Access.bounds),
    # and the extent of the array this pointer starts (`a[i]` of `float a[16][17]`: 17). Both
    # hold only while the pointer is the subscripts' result: `shape_at` is (its offset, its
    # element type) then; moved or cast (`a[i] + 1`, `(int*)p`), it is another pointer.
    bounds: tuple = ()
    row: int | None = None
    shape_at: tuple | None = field(default=None, compare=False)

    def subscripted(self) -> bool:
        return self.shape_at is not None and self.shape_at[0] is self.offset and self.shape_at[1] == self.elem

    def index(self, idx: ir.Expr, offset: ir.Expr) -> "Pointer":
        """`self[idx]`, at `offset`: one dimension of the array in, its subscript kept when the
        dimension's extent is known."""
        held = self.subscripted()
        bounds = (self.bounds if held else ()) + (((idx, self.row),) if held and self.row else ())
        return replace(self, offset=offset, inner=self.inner[1:], bounds=bounds,
                       row=self.inner[0] if self.inner and isinstance(self.inner[0], int) else None,
                       shape_at=(offset, self.elem))   # (a symbolic extent, an ir.Expr, bounds nothing)

    def access_bounds(self) -> tuple:
        return self.bounds if self.subscripted() else ()


def array_start(buffer: str, space: str, elem: str, extents) -> Pointer:
    """The start of a declared array of these extents (outermost first; None where not known)."""
    zero = ir.Const(0)
    return Pointer(buffer, space, elem, zero, tuple(extents[1:]), row=extents[0] if extents else None,
                   shape_at=(zero, elem))


@dataclass(frozen=True)
class BuiltinVec:
    prefix: str         # "tid", "bid", "bdim", "gdim"


@dataclass(frozen=True)
class ParamStruct:
    name: str           # Metal constant argument struct: arg.H[0] is a uniform parameter


@dataclass(frozen=True)
class LocalRef:
    """A local scalar or vector variable (IR variable names are unique per declaration)."""
    name: str
    ty: str


@dataclass(frozen=True)
class LocalStruct:
    """A local variable of a struct type of the file: each scalar member is an IR variable
    `NAME.member` (nested members `NAME.a.b`)."""
    name: str
    ty: str


@dataclass(frozen=True)
class Group:
    """A cooperative group (CUDA's cooperative_groups): "block", "grid", or a "tile" of `size`
    threads; its `.sync()` is the barrier of those threads."""
    kind: str
    size: int | None = None


@dataclass(frozen=True)
class SharedScalar:
    """A `__shared__ float total;` scalar: every use is a memory access of a one-element buffer."""
    ptr: "Pointer"


@dataclass(frozen=True)
class FuncRef:
    name: str


Value = Scalar | Vector | Pointer | BuiltinVec | ParamStruct | LocalRef | SharedScalar | FuncRef


@dataclass
class TypeInfo:
    base: str
    ptr: int = 0
    space: str | None = None
    ref: bool = False
    quals: tuple[str, ...] = ()


def _add(a: ir.Expr, b: ir.Expr) -> ir.Expr:
    if isinstance(b, ir.Const) and b.value == 0:
        return a
    if isinstance(a, ir.Const) and a.value == 0:
        return b
    if isinstance(a, ir.Const) and isinstance(b, ir.Const):
        return ir.Const(a.value + b.value)
    return ir.BinOp("+", a, b)


def _mul(a: ir.Expr, k: int) -> ir.Expr:
    if k == 1:
        return a
    if isinstance(a, ir.Const):
        return ir.Const(a.value * k)
    return ir.BinOp("*", a, ir.Const(k))


def const_int(e: ir.Expr) -> int | None:
    """The value of an integer expression built from constants alone (`N / 2`, `1 << K`), with C's
    truncating division; None when it is not one. For numbers the source names (array extents,
    enumerators, file-scope constants)."""
    if isinstance(e, ir.Const):
        return e.value
    if isinstance(e, ir.UnOp):
        a = const_int(e.a)
        if a is None:
            return None
        return {"-": -a, "~": ~a, "!": int(not a)}.get(e.op)
    if isinstance(e, ir.BinOp):
        a, b = const_int(e.a), const_int(e.b)
        if a is None or b is None:
            return None
        if e.op in ("/", "%"):
            if b == 0:
                return None
            q = abs(a) // abs(b) * (1 if (a >= 0) == (b >= 0) else -1)
            return q if e.op == "/" else a - b * q
        if e.op in ("<<", ">>") and not 0 <= b < 64:
            return None
        ops = {"+": a + b, "-": a - b, "*": a * b, "&": a & b, "|": a | b, "^": a ^ b,
               "==": int(a == b), "!=": int(a != b), "<": int(a < b), "<=": int(a <= b), ">": int(a > b),
               ">=": int(a >= b), "&&": int(bool(a and b)), "||": int(bool(a or b))}
        if e.op == "<<":
            return a << b
        if e.op == ">>":
            return a >> b
        return ops.get(e.op)
    if isinstance(e, ir.Select):
        c = const_int(e.cond)
        return None if c is None else const_int(e.a if c else e.b)
    return None
