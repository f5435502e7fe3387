"""Vector accessors spelled in a macro's definition (`#define ACC(s, y) s.s0 += y.s1 * k;`, invoked
as `ACC(total, regB)`): libclang gives the expression no accessor, and its extent is the whole
invocation, so the accessor is read from the definition's text.

Inside one expansion, the accessors (`.s0`, `->next`) the definition spells follow each other in the
order their expressions end: a post-order walk of the expansion's expressions meets them in that
order. The definition's accessors are paired with the expansion's vector-component and member
expressions one to one, and only where the counts agree, each member's name is the one spelled and
each component's lane count is its type's: anything else (a macro expanding another, an accessor
spelled in an argument among them) leaves the accessor unread, and the construct `unknown`.
Two more things an expansion hides: a number literal's text (read where it is spelled), and
`as_ushort8(v)` (clang's `__builtin_astype`, unmarked like an implicit cast: told by its lane type).
"""

from __future__ import annotations

import re

import clang.cindex as ci

from analyzer.frontend.clang.cursors import _spelling, ext_accessor, type_name

CK = ci.CursorKind

# pp-numbers first, so that `1.0f` and `.5` never read as an accessor
_TOKEN = re.compile(r"\.?\d(?:[eEpP][+-]|[\w.])*|[A-Za-z_]\w*|->|\.|\S")
_DEFINE = re.compile(rb"#\s*define\s+([A-Za-z_]\w*)(\([^)]*\))?")


def accessor(c, kids, source) -> str | None:
    """cursors.ext_accessor, and where the text it reads is no accessor (the extent is a macro's
    invocation), the accessor the macro's definition spells."""
    field = ext_accessor(c, kids, source)
    if field is None or re.fullmatch(r"[A-Za-z_]\w*", field):
        return field
    return body_accessor(c, source) or field


def body_accessor(c, source) -> str | None:
    """The accessor of the vector-component expression `c`, where the definition of the macro whose
    expansion holds it spells it; None where that cannot be read exactly."""
    if c.extent.start.file is None:
        return None
    table = _expansion_table(c, source)
    return None if table is None else table.get(c.hash)


def _expansion_table(c, source):
    cache = source.__dict__.setdefault("_macro_accessors", {})
    start = c.extent.start
    key = (start.file.name, start.offset)
    if key in cache:
        return cache[key]
    cache[key] = None
    root = _enclosing_function(c)
    if root is None:
        return None
    nodes = []   # the expansion's component and member expressions, in post-order

    def walk(n):
        for k in n.get_children():
            walk(k)
        s = n.extent.start
        if s.file is not None and s.file.name == key[0] and s.offset == key[1] and _is_dot(n):
            nodes.append(n)
    walk(root)
    spelled = _definition_accessors(nodes, source, key)
    if spelled is None or len(spelled) != len(nodes):
        return None
    table = {}
    for n, (arrow, name) in zip(nodes, spelled):
        if n.kind == CK.MEMBER_REF_EXPR:
            if n.spelling != name:
                return None
            continue
        if arrow or _lanes(n.type) != _lane_count(name, _lanes(next(iter(n.get_children())).type)):
            return None
        table[n.hash] = name
    cache[key] = table
    return table


def _is_dot(n) -> bool:
    """A member expression, or a vector component one that changes the lane count (`v.s0`,
    `v.s0123` of a float8) and keeps the lane type: told from an implicit cast of a vector and
    from `as_ushort8(v)` by that, since clang marks neither; a component of as many lanes as its base (`v.wzyx`) is not counted, and the
    definition's accessor it spells then leaves the counts apart (the construct unknown)."""
    if n.kind == CK.MEMBER_REF_EXPR:
        return True
    if n.kind != CK.UNEXPOSED_EXPR:
        return False
    kids = list(n.get_children())
    return len(kids) == 1 and kids[0].type.get_canonical().kind == ci.TypeKind.EXTVECTOR and \
        _lanes(n.type) != _lanes(kids[0].type) and _element(n.type) == _element(kids[0].type)


def _element(t) -> str:
    """The lane type (`as_ushort8(uint4)`, clang's `__builtin_astype`, changes it; a component never)."""
    t = t.get_canonical()
    if t.kind == ci.TypeKind.EXTVECTOR:
        t = t.element_type.get_canonical()
    return t.spelling.replace("__private ", "").replace("const ", "")


def _lanes(t) -> int:
    t = t.get_canonical()
    return t.element_count if t.kind == ci.TypeKind.EXTVECTOR else 1


def _lane_count(name: str, n: int) -> int | None:
    from analyzer.frontend.opencl import _swizzle
    lanes = _swizzle(name, n)
    return None if lanes is None else len(lanes)


def _enclosing_function(c):
    tu = c.translation_unit
    start, end = c.extent.start, c.extent.end
    for top in tu.cursor.get_children():
        e = top.extent
        if e.start.file is None or e.start.file.name != start.file.name:
            continue
        if e.start.offset <= start.offset and end.offset <= e.end.offset:
            return top
    return None


def _definition_accessors(nodes, source, key):
    """The (is `->`, name) pairs of the accessors in the definition of the macro invoked at `key`,
    in order; None where the definition is not found."""
    data = source.bytes_of(key[0])
    m = re.match(rb"[A-Za-z_]\w*", data[key[1]:key[1] + 200])
    if m is None:
        return None
    name = m.group(0)
    # the file holding the definition: where a token of the expansion is spelled, or the invoking file
    files = {key[0]} | {f for n in nodes for k in (n, *n.get_children()) for f in (_spelling(k.extent.start)[0],) if f}
    found = [(f, d) for f in sorted(files) for d in _DEFINE.finditer(source.bytes_of(f)) if d.group(1) == name]
    if len(found) != 1:
        return None   # not found, or defined more than once (`#ifdef` variants): which one holds is not read
    f, d = found[0]
    toks = _TOKEN.findall(_logical_line(source.bytes_of(f), d.end()))
    return [(t == "->", toks[i + 1]) for i, t in enumerate(toks[:-1])
            if t in (".", "->") and re.fullmatch(r"[A-Za-z_]\w*", toks[i + 1])]


def _logical_line(text: bytes, at: int) -> str:
    """A #define's body: up to the first newline not escaped by a backslash, comments dropped."""
    out = []
    i = at
    while True:
        j = text.find(b"\n", i)
        j = len(text) if j < 0 else j
        line = text[i:j]
        if line.rstrip().endswith(b"\\"):
            out.append(line.rstrip()[:-1])
            i = j + 1
            continue
        out.append(line)
        break
    body = b" ".join(out).decode(errors="replace")
    body = re.sub(r"/\*.*?\*/", " ", body, flags=re.S)
    return re.sub(r"//.*", "", body)


_NUMBER = re.compile(rb"\.?\d(?:[eEpP][+-]|[\w.])*")


def spelled_literal(c, source) -> str:
    """A number literal's text where it is written: inside a macro's definition its extent is the
    whole invocation, the same for every literal of the expansion (`p[0] = 1.0f; p[0] = 2.0f;`
    would read as one value twice)."""
    f, off = _spelling(c.extent.start)
    if f:
        try:
            m = _NUMBER.match(source.bytes_of(f), off)
        except OSError:
            m = None
        if m:
            return m.group(0).decode()
    return source.text(c)


def astype(lowering, c, kid):
    """`as_ushort8(v)` of a uint4 (clang's `__builtin_astype`, its operand's bits read as another
    type), which a macro's expansion leaves unmarked as clang's implicit casts are."""
    from analyzer.frontend.opencl import _reinterpret
    return _reinterpret(lowering, lowering.rvalue(kid), type_name(c.type))
