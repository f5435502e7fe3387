"""WGSL types as the lowering needs them (scalars, vectors, matrices, arrays, atomics, structs,
pointers), their memory layout (WGSL's host-shareable alignment and size rules), and the values
expressions lower to."""

from __future__ import annotations

from dataclasses import dataclass, field

from analyzer import ir

SCALARS = {"i32": 4, "u32": 4, "f32": 4, "f16": 2, "bool": 4, "AbstractInt": 4, "AbstractFloat": 4}
FLOATS = frozenset({"f32", "f16", "AbstractFloat"})
SWIZZLE = {c: i for i, c in enumerate("xyzw")} | {c: i for i, c in enumerate("rgba")}


@dataclass(frozen=True)
class Ty:
    kind: str                   # scalar vec mat array atomic struct ptr
    name: str = ""              # scalar name, struct name, pointer address space
    elem: "Ty | None" = None    # element (vec, mat column, array, atomic, ptr)
    n: int | None = None        # vector width, matrix columns, array length (None: runtime-sized)

    def __str__(self) -> str:
        if self.kind == "scalar" or self.kind == "struct":
            return self.name
        if self.kind == "vec":
            return f"vec{self.n}<{self.elem}>"
        if self.kind == "array":
            return f"array<{self.elem}>" if self.n is None else f"array<{self.elem}, {self.n}>"
        if self.kind == "mat":
            return f"mat{self.n}x{self.elem.n}<{self.elem.elem}>"  # type: ignore[union-attr]
        return f"{self.kind}<{self.elem}>"

    @property
    def is_float(self) -> bool:
        t = self
        while t.kind in ("vec", "atomic") and t.elem is not None:
            t = t.elem
        return t.kind == "scalar" and t.name in FLOATS

    def scalar(self) -> "Ty":
        t = self
        while t.elem is not None and t.kind != "ptr":
            t = t.elem
        return t


def scalar(name: str) -> Ty:
    return Ty("scalar", name)


I32, U32, F32, BOOL = scalar("i32"), scalar("u32"), scalar("f32"), scalar("bool")


@dataclass
class Struct:
    name: str
    members: list[tuple[str, Ty, dict]]     # name, type, attributes (builtin, align, size)


def align_of(t: Ty, structs: dict[str, Struct]) -> int:
    if t.kind == "scalar":
        return SCALARS.get(t.name, 4)
    if t.kind == "vec":
        return align_of(t.elem, structs) * (2 if t.n == 2 else 4)  # type: ignore[arg-type]
    if t.kind in ("array", "atomic", "mat"):
        return align_of(t.elem, structs)  # type: ignore[arg-type]
    if t.kind == "struct":
        s = structs[t.name]
        return max((m[2].get("align") or align_of(m[1], structs) for m in s.members), default=4)
    return 4


def size_of(t: Ty, structs: dict[str, Struct]) -> int | None:
    """Bytes; None for a runtime-sized array (or a struct ending in one)."""
    if t.kind == "scalar":
        return SCALARS.get(t.name, 4)
    if t.kind == "vec":
        return size_of(t.elem, structs) * t.n  # type: ignore[arg-type,operator]
    if t.kind == "atomic":
        return size_of(t.elem, structs)  # type: ignore[arg-type]
    if t.kind in ("array", "mat"):
        if t.n is None:
            return None
        return stride_of(t, structs) * t.n
    if t.kind == "struct":
        offsets, end = layout(t.name, structs)
        a = align_of(t, structs)
        return None if end is None else -(-end // a) * a
    return 4


def stride_of(t: Ty, structs: dict[str, Struct]) -> int:
    """Bytes between elements of an array (or columns of a matrix)."""
    e = t.elem
    a, s = align_of(e, structs), size_of(e, structs) or 0  # type: ignore[arg-type]
    return -(-s // a) * a


def layout(name: str, structs: dict[str, Struct]) -> tuple[dict[str, tuple[int, Ty]], int | None]:
    """Members' byte offsets and types, and the end of the last member (None if runtime-sized)."""
    out: dict[str, tuple[int, Ty]] = {}
    off = 0
    end: int | None = 0
    for mname, mt, attrs in structs[name].members:
        a = attrs.get("align") or align_of(mt, structs)
        off = -(-off // a) * a
        out[mname] = (off, mt)
        size = attrs.get("size") or size_of(mt, structs)
        if size is None:
            end = None
            break
        off += size
        end = off
    return out, end


# ---------- values ----------

@dataclass(frozen=True)
class Scalar:
    expr: ir.Expr
    ty: Ty


@dataclass(frozen=True)
class Vec:
    comps: tuple[ir.Expr, ...]
    ty: Ty                      # the vector type


@dataclass(frozen=True)
class Local:
    """A function-scope scalar or vector variable: IR variables `name` or `name.0`, `name.1`, ..."""
    name: str
    ty: Ty


@dataclass(frozen=True)
class Ref:
    """A place in memory: `ty` at byte `offset` of `buffer`."""
    buffer: str
    space: str
    offset: ir.Expr
    ty: Ty
    writable: bool = True
    # The subscripts of fixed-size arrays and vectors on the way here, each with its length (ir.Access.bounds).
    bounds: tuple = ()


@dataclass(frozen=True)
class Pointer:
    """The value of `&place` (a pointer to a memory place or to a local variable)."""
    target: "Ref | Local"


@dataclass(frozen=True)
class StructVal:
    """A struct value by member: uniform parameters, builtin inputs."""
    members: dict = field(default_factory=dict)
    ty: Ty | None = None

    def __hash__(self) -> int:   # values are compared by identity only
        return id(self)


@dataclass(frozen=True)
class Lane:
    """Lane `index` (not a constant) of a local vector, as a place: `v[i] = x`."""
    vec: Local
    index: ir.Expr


@dataclass(frozen=True)
class ArrayVal:
    """An array value (`array(1u, 2u, 4u)`, a module-scope `const` table): its elements; `key`
    names the uninterpreted function a non-constant index reads it through."""
    elems: tuple
    ty: Ty
    key: int = 0


@dataclass(frozen=True)
class MatPlace:
    """A matrix or a small fixed-size array held in variables (a function's result, a member of
    one): a place per column or element."""
    cols: tuple
    ty: Ty


Value = Scalar | Vec | Local | Ref | Pointer | StructVal | ArrayVal | MatPlace
