"""Reading clang's cursors: implicit nodes skipped, types named as the IR's type names (`float`,
`uint`, `float4`, a struct's name), address spaces, source text by offsets, and spans.

Separate so that every part of the clang lowering reads the AST the same way.
"""

from __future__ import annotations

import re
from ctypes import POINTER, byref, c_uint
from functools import lru_cache

import clang.cindex as ci

from analyzer import ir

CK = ci.CursorKind
TK = ci.TypeKind

_SCALARS = {TK.BOOL: "bool", TK.CHAR_S: "char", TK.SCHAR: "char", TK.CHAR_U: "uchar", TK.UCHAR: "uchar",
            TK.SHORT: "short", TK.USHORT: "ushort", TK.INT: "int", TK.UINT: "uint", TK.LONG: "long",
            TK.ULONG: "ulong", TK.LONGLONG: "longlong", TK.ULONGLONG: "ulonglong", TK.FLOAT: "float",
            TK.DOUBLE: "double", TK.HALF: "half", TK.FLOAT16: "half", TK.BFLOAT16: "bfloat", TK.VOID: "void",
            TK.INT128: "longlong", TK.UINT128: "ulonglong", TK.CHAR16: "ushort", TK.CHAR32: "uint",
            TK.WCHAR: "int", TK.LONGDOUBLE: "double"}
SCALAR_KINDS = frozenset(_SCALARS)
_AS = re.compile(r"address_space\((\d+)\)|\b(__global|__local|__constant|__private|__generic)\b")
# Address spaces: Metal's (by the numbers of include/metal_stdlib) and OpenCL's keywords.
_SPACE_OF = {"1": ir.GLOBAL, "3": ir.SHARED, "4": ir.CONSTANT, "__global": ir.GLOBAL, "__local": ir.SHARED,
             "__constant": ir.CONSTANT, "__private": ir.PRIVATE, "__generic": None}
PASS_THROUGH = {CK.UNEXPOSED_EXPR, CK.PAREN_EXPR}


def strip(c):
    """The expression under implicit casts and parentheses (an UNEXPOSED_EXPR with one child
    whose extent is its own) and under a copy by an implicit copy or move constructor (its value
    is its argument's: clang shows one for a struct passed by value in an instantiated body)."""
    while c.kind in PASS_THROUGH or c.kind == CK.CALL_EXPR and _implicit_copy(c):
        if c.kind == CK.CALL_EXPR:
            c = next(c.get_children())
            continue
        kids = list(c.get_children())
        if len(kids) != 1:
            return c
        if c.kind == CK.UNEXPOSED_EXPR and is_vector(kids[0].type) and (
                c.extent.end.offset > kids[0].extent.end.offset or _spelled_past(c, kids[0])):
            return c   # an ext_vector element access (`v.xy`): its accessor follows the child
        c = kids[0]
    return c


def substituted(c) -> bool:
    """Whether a DECL_REF_EXPR is a template's non-type parameter in an instantiated body (clang's
    SubstNonTypeTemplateParmExpr: no name, no declaration, the argument under it)."""
    kids = list(c.get_children())
    return not c.spelling and c.referenced is None and len(kids) == 1 and kids[0].kind.is_expression()


def _implicit_copy(c) -> bool:
    ref = c.referenced
    if ref is None or ref.kind != CK.CONSTRUCTOR or not (ref.is_copy_constructor() or ref.is_move_constructor()) \
            or not ref.is_default_method():
        return False
    kids = list(c.get_children())
    return len(kids) == 1 and kids[0].kind.is_expression()


def in_union(field) -> bool:
    """Whether a member shares its bytes with others: it is a union's, or a member of an anonymous
    struct inside one (`union { uint4 data; struct { uchar3 start; ... }; }`)."""
    p = field.semantic_parent if field is not None and field.kind == CK.FIELD_DECL else None
    while p is not None and p.kind in (CK.STRUCT_DECL, CK.UNION_DECL, CK.CLASS_DECL):
        if p.kind == CK.UNION_DECL:
            return True
        if not p.is_anonymous():
            return False
        p = p.semantic_parent
    return False


def has_union(t) -> bool:
    """Whether a record type is a union or holds one, however deep."""
    t = canonical(t)
    if t.kind != TK.RECORD:
        return False
    return t.get_declaration().kind == CK.UNION_DECL or any(has_union(f.type) for f in t.get_fields())


def canonical(t):
    return t.get_canonical()


def space_of(t) -> str | None:
    """The address space a (pointee) type names in its spelling, or None."""
    m = None
    for m in _AS.finditer(t.get_canonical().spelling):
        pass
    if m is None:
        for m in _AS.finditer(t.spelling):
            pass
    if m is None:
        return None
    return _SPACE_OF.get(m.group(1) or m.group(2))


def is_vector(t) -> bool:
    return canonical(t).kind in (TK.VECTOR, TK.EXTVECTOR)


def type_name(t) -> str:
    """The IR's name of a type: a scalar's (`uint`), a vector's (`float4`), a record's tag name;
    pointers and arrays name their element."""
    t = canonical(t)
    k = t.kind
    if k in _SCALARS:
        return _SCALARS[k]
    if k in (TK.POINTER, TK.LVALUEREFERENCE, TK.RVALUEREFERENCE):
        return type_name(t.get_pointee())
    if k in (TK.CONSTANTARRAY, TK.INCOMPLETEARRAY, TK.VARIABLEARRAY, TK.DEPENDENTSIZEDARRAY):
        return type_name(t.element_type)
    if is_vector(t):
        return f"{type_name(t.element_type)}{t.element_count}"
    if k == TK.RECORD:
        decl = t.get_declaration()
        name = decl.spelling or t.spelling
        return re.sub(r"^(struct|class|union)\s+", "", name)
    if k == TK.ENUM:
        return "int"
    return re.sub(r"\b(const|volatile|__private|__global|__local|__constant|__attribute__\(\(address_space\(\d+\)\)\))\b\s*",
                  "", t.spelling).strip() or "int"


# Types libclang's size query crashes on (an overload set's placeholder) or has no size for.
_NO_SIZE = {TK.OVERLOAD, TK.DEPENDENT, TK.INVALID, TK.FUNCTIONPROTO, TK.FUNCTIONNOPROTO, TK.VOID}


def size_of_type(t) -> int | None:
    ct = canonical(t)
    if ct.kind in _NO_SIZE or "type-parameter" in ct.spelling:
        return None
    n = ct.get_size()
    return n if n and n > 0 else None


def is_pointer(t) -> bool:
    return canonical(t).kind == TK.POINTER


def is_float_type(t) -> bool:
    t = canonical(t)
    return t.kind in (TK.FLOAT, TK.DOUBLE, TK.HALF, TK.FLOAT16, TK.BFLOAT16, TK.LONGDOUBLE)


def template_args(spelling: str, head: str) -> list[str] | None:
    """The top-level template arguments after `head` (which ends in `<`) in a type's spelling:
    `fragment<a, b<c, d>, e>` gives a, b<c, d> and e; None where `head` is not in it."""
    start = spelling.find(head)
    if start < 0:
        return None
    depth, args, cur = 0, [], ""
    for ch in spelling[start + len(head):]:
        if ch in "<(":
            depth += 1
        elif ch in ">)":
            if depth == 0:
                args.append(cur.strip())
                return args
            depth -= 1
        if ch == "," and depth == 0:
            args.append(cur.strip())
            cur = ""
            continue
        cur += ch
    return None


def children(c) -> list:
    return list(c.get_children())


@lru_cache(maxsize=64)
def file_bytes(path: str) -> bytes:
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError:
        return b""


class Source:
    """Text of the files the AST points into: the parsed text for the main file and for the headers
    clang read rewritten (Metal's), the files themselves for other headers."""

    def __init__(self, filename: str, text: str, rewritten: dict | None = None):
        self.filename = filename
        self.main = text.encode()
        self.rewritten = {path: t.encode() for path, t in (rewritten or {}).items()}

    def bytes_of(self, path: str) -> bytes:
        if path == self.filename:
            return self.main
        return self.rewritten[path] if path in self.rewritten else file_bytes(path)

    def text(self, c) -> str:
        start, end = c.extent.start, c.extent.end
        if start.file is None:
            return ""
        return self.bytes_of(start.file.name)[start.offset:end.offset].decode(errors="replace")

    def spelled(self, c) -> str:
        """The text `c` was written as: inside a macro's argument, the argument's own text (its
        extent is the macro's whole invocation there); "" where that is not one range of one file."""
        (f1, o1), (f2, o2) = _spelling(c.extent.start), _spelling(c.extent.end)
        if not f1 or f1 != f2 or o2 < o1:
            return ""
        return self.bytes_of(f1)[o1:o2].decode(errors="replace")

    def after(self, c, n: int = 200) -> str:
        """Up to n characters of the file from the cursor's start."""
        start = c.extent.start
        if start.file is None:
            return ""
        return self.bytes_of(start.file.name)[start.offset:start.offset + n].decode(errors="replace")


def span_of(c, filename: str) -> ir.Span:
    loc = c.extent.start
    f = loc.file.name if loc.file is not None else filename
    return ir.Span(f, loc.line, loc.column)


def reference_cast(c, text: str) -> bool:
    """Whether `c` (with its source `text`) casts to a reference (`(float4 &)(p[j])`,
    `reinterpret_cast<T &>(x)`): the same memory as its operand, where a cast to a value would be a
    copy made where it is written."""
    if c.kind == CK.CSTYLE_CAST_EXPR:
        m = re.match(r"\(([^()]*)\)", text)
    elif c.kind in (CK.CXX_REINTERPRET_CAST_EXPR, CK.CXX_STATIC_CAST_EXPR, CK.CXX_CONST_CAST_EXPR):
        m = re.match(r"\w+\s*<(.*)>\s*\(", text, re.S)
    else:
        return False
    return bool(m) and m.group(1).rstrip().endswith("&")


def _spelling(loc) -> tuple[str, int]:
    """(file, offset) where the token at `loc` was spelled (libclang's clang_getSpellingLocation,
    which the Python bindings leave out)."""
    lib = ci.conf.lib
    if not getattr(lib, "_kr_spelling", False):
        lib.clang_getSpellingLocation.argtypes = [ci.SourceLocation, POINTER(ci.c_object_p), POINTER(c_uint),
                                                  POINTER(c_uint), POINTER(c_uint)]
        lib.clang_getSpellingLocation.restype = None
        lib._kr_spelling = True
    f, line, col, off = ci.c_object_p(), c_uint(), c_uint(), c_uint()
    lib.clang_getSpellingLocation(loc, byref(f), byref(line), byref(col), byref(off))
    if not f:
        return "", 0
    return str(ci.File(f).name), off.value


def _spelled_past(c, kid) -> bool:
    """Whether `c` was spelled past the end of its child (`v.xy` inside a macro's argument, where
    both extents are the invocation's)."""
    (f1, o1), (f2, o2) = _spelling(c.extent.end), _spelling(kid.extent.end)
    return bool(f1) and f1 == f2 and o1 > o2


def reinterpreted(c, kid) -> bool:
    """Whether `c` reads the bits of the vector `kid` as lanes of another size (`as_ushort8(v)` of a
    uint4, clang's `__builtin_astype`): its lane type and count differ, which no component and no
    implicit cast of a vector does (a bitcast of as many lanes, `as_int4(u)`, keeps the value as it
    was read before)."""
    if not is_vector(kid.type):
        return False
    elem = lambda t: type_name(canonical(t).element_type) if is_vector(t) else type_name(t)  # noqa: E731
    lanes = lambda t: canonical(t).element_count if is_vector(t) else 1  # noqa: E731
    return elem(c.type) != elem(kid.type) and lanes(c.type) != lanes(kid.type)


def ext_accessor(c, kids, source) -> str | None:
    """The accessor of `v.xy` on an ext_vector (OpenCL, Metal: an UNEXPOSED_EXPR over the vector,
    the accessor the text after the dot), or None where `c` is no such access. Inside a macro's
    argument the extents are the invocation's: the text is where it was spelled."""
    if len(kids) != 1 or not is_vector(kids[0].type):
        return None
    if reinterpreted(c, kids[0]):
        return None
    if c.extent.end.offset > kids[0].extent.end.offset:
        return source.text(c).rsplit(".", 1)[-1].strip()
    whole, base = source.spelled(c), source.spelled(kids[0])
    if whole and base and whole.startswith(base) and whole[len(base):].lstrip().startswith("."):
        return whole[len(base):].lstrip()[1:].strip()
    return None
