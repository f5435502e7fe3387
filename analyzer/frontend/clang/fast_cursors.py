"""Cheaper calls on libclang's cursors, with the bindings' results unchanged.

Lowering a file of many template instantiations reads millions of cursor properties (mlx's
`scan.metal`, 456 kernels; candle's `gemv.metal`, 144), and three costs of the Python bindings
dominated its profile:

- every cursor method and property is guarded by `is_null`, which compares the cursor with the
  null cursor through `clang_equalCursors`, a C call through ctypes. Two cursors of different
  kinds are never equal (`clang_equalCursors` compares the kinds), so a cursor whose kind is not
  the null cursor's is not null without asking; one of that kind is still asked;
- `CursorKind.from_id` (and `TypeKind`'s) calls the enumeration, `Enum.__call__`; its table
  (`_value2member_map_`) answers the same, and an id it lacks still goes through the call;
- `get_children()` builds the list through a ctypes callback per child, each time it is asked:
  the list is kept on the cursor object (as the bindings keep `_type` and `_referenced`; a
  translation unit's AST does not change once parsed).
"""

from __future__ import annotations

import clang.cindex as ci

_installed = False
_NULL = "Tried calling method on a null-cursor."


def install() -> None:
    """Replace the bindings' guards, `from_id` and `get_children` by their fast forms (once)."""
    global _installed
    if _installed:
        return
    ci.conf.lib     # loaded: sets conf.null_cursor
    null_kind = ci.conf.null_cursor._kind_id
    slow_is_null = ci.Cursor.is_null

    def is_null(self) -> bool:
        return self._kind_id == null_kind and slow_is_null(self)

    def guarded(func):
        def fast(self, *args, **kwargs):
            if self._kind_id == null_kind and slow_is_null(self):
                raise Exception(_NULL)
            return func(self, *args, **kwargs)
        fast.__doc__, fast.__name__ = func.__doc__, func.__name__
        return fast

    def unguarded(f):
        """The function the bindings' guard wraps (their `inner` closes over it), or None."""
        if getattr(f, "__name__", "") != "inner" or not f.__closure__:
            return None
        inner = f.__closure__[0].cell_contents
        return inner if callable(inner) else None

    for name, attr in list(vars(ci.Cursor).items()):
        if isinstance(attr, property) and attr.fget is not None and (fn := unguarded(attr.fget)) is not None:
            setattr(ci.Cursor, name, property(guarded(fn), attr.fset, attr.fdel, attr.__doc__))
        elif callable(attr) and (fn := unguarded(attr)) is not None:
            setattr(ci.Cursor, name, guarded(fn))
    ci.Cursor.is_null = is_null

    # After the guards: get_children is guarded itself.
    children = ci.Cursor.get_children

    def get_children(self):
        kept = self.__dict__.get("_children")
        if kept is None:
            kept = self._children = list(children(self))
        return iter(kept)

    get_children.__doc__ = children.__doc__
    ci.Cursor.get_children = get_children

    def from_id(cls, id):
        try:
            return cls._value2member_map_[id]
        except (KeyError, TypeError):
            return cls(id)

    ci.BaseEnumeration.from_id = classmethod(from_id)

    # The two kinds read most, in one call each (the guard, the property and from_id were three).
    cursor_kinds, type_kinds = ci.CursorKind._value2member_map_, ci.TypeKind._value2member_map_

    def cursor_kind(self):
        k = self._kind_id
        if k == null_kind and slow_is_null(self):
            raise Exception(_NULL)
        hit = cursor_kinds.get(k)
        return hit if hit is not None else ci.CursorKind(k)

    def type_kind(self):
        hit = type_kinds.get(self._kind_id)
        return hit if hit is not None else ci.TypeKind(self._kind_id)

    ci.Cursor.kind = property(cursor_kind, doc=ci.Cursor.kind.__doc__)
    ci.Type.kind = property(type_kind, doc=ci.Type.kind.__doc__)
    _installed = True
