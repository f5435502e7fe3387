"""Buffers: which GLSL array a TIR buffer is (handle parameter, alias view, shared or local
allocation) and the element indices of a load or store.

Separate because it owns the storage model (`_Storage`, the std430 aliases) that expressions and
statements only consult.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from analyzer.tvm.glsl.syntax import _SWIZZLE, _Type, _strip
from analyzer.tvm.glsl.tir_walk import _op_name, _short


@dataclass
class _Storage:
    kind: str          # "global", "shared", "local"
    name: str          # GLSL array identifier
    dtype: _Type       # element type
    root: int          # chandle of the underlying allocation (handle parameter or AllocBuffer)
    label: str         # TIR buffer name, for messages



class BufferMixin:
    """Buffer declarations, views and accesses of a `_Translator`."""

    def storage_of(self, buf) -> _Storage:
        st = self.storage.get(buf.__chandle__())
        if st is None:
            raise self.fail(f"access to buffer {buf.name} that no DeclBuffer/AllocBuffer declares")
        return st

    def buffer_type(self, buf) -> _Type:
        return self.parse_type(buf.dtype, f"buffer {buf.name}")

    def check_plain(self, buf) -> None:
        off = buf.elem_offset
        if not (type(off).__name__ == "IntImm" and int(off.value) == 0):
            raise self.fail(f"buffer {buf.name} with elem_offset {off}")
        if len(list(buf.strides)) not in (0, 1):
            raise self.fail(f"strided buffer {buf.name}")

    def declare_view(self, buf, data) -> None:
        """A DeclBuffer: `buf` views the memory of `data` (a handle parameter or another buffer)."""
        self.check_plain(buf)
        t = self.buffer_type(buf)
        dk = type(data).__name__
        if dk == "Var" and data.__chandle__() in self.handles:
            root = data.__chandle__()
            base = None
        elif dk == "Call" and _short(_op_name(data)) == "buffer_data" and len(data.args) == 1:
            base = self.storage_of(data.args[0])
            root = base.root
        else:
            raise self.fail(f"DeclBuffer {buf.name} over {dk} {data}")
        if base is not None and base.kind != "global":
            if base.dtype != t:
                raise self.fail(
                    f"{base.kind} buffer {base.label} ({base.dtype.tir}) re-viewed as {t.tir} by {buf.name}"
                    " (type-punned shared/local memory is not modelled)")
            self.storage[buf.__chandle__()] = _Storage(base.kind, base.name, t, root, buf.name)
            self.emit(f"// {buf.name}: view of {base.kind} {base.name}")
            return
        member, elem, _ = self.handles[root]
        if t != elem:
            member = self.alias(root, t)
        self.storage[buf.__chandle__()] = _Storage("global", member, t, root, buf.name)
        self.emit(f"// {buf.name}: {t.tir} view of {self.handles[root][0]}")

    def alias(self, root: int, t: _Type) -> str:
        key = (root, t.tir)
        if key not in self.aliases:
            member = self.ident(f"{self.handles[root][0]}_as_{t.tir}")
            self.aliases[key] = member
            self.alias_order.append((root, t, member))
            self.use_type(t, storage=True)
        return self.aliases[key]

    def allocate(self, stmt) -> None:
        buf = stmt.buffer
        self.check_plain(buf)
        t = self.buffer_type(buf)
        scope = str(buf.ty.storage_scope)
        size = 1
        for d in buf.shape:
            if type(d).__name__ != "IntImm":
                raise self.fail(f"allocation {buf.name} of symbolic size {list(buf.shape)}")
            size *= int(d.value)
        if size <= 0:
            raise self.fail(f"allocation {buf.name} of size {size}")
        name = self.ident(buf.name)
        note = ""
        ann = getattr(stmt, "annotations", None)
        if ann is not None and len(ann):
            note = "  // " + ", ".join(f"{k}={v}" for k, v in ann.items())
        if scope in ("shared", "shared.dyn"):
            self.shared_decls.append(f"shared {t.glsl} {name}[{size}];{note}")
            self.storage[buf.__chandle__()] = _Storage("shared", name, t, buf.__chandle__(), buf.name)
            self.emit(f"// {buf.name}: {scope} {t.tir}[{size}], declared at global scope as {name}")
        elif scope == "local":
            self.storage[buf.__chandle__()] = _Storage("local", name, t, buf.__chandle__(), buf.name)
            self.emit(f"{t.glsl} {name}[{size}];{note}")
        else:
            raise self.fail(f"allocation {buf.name} in storage scope '{scope}'")

    def index_text(self, e) -> str:
        t = self.type_of(e)
        text = _strip(self.ex(e))
        # GLSL indexes with 32-bit integers only: a 64-bit TIR index is converted.
        return text if t.is_int and t.bits == 32 else f"int({text})"

    def lane_indices(self, index, lanes: int) -> list[str]:
        """Scalar element indices of a vector index expression, lane by lane."""
        if type(index).__name__ == "Ramp":
            t = self.type_of(index.base)
            base = self.ex(index.base)
            if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_.]*|\(?-?\d+l?u?l?\)?", base):
                # Evaluated once (as TIR does), and readable: `A[i]`, `A[i + 1]`, ...
                base = self.temp(t, base, "idx")
            stride = index.stride
            out = []
            const_base = type(index.base).__name__ == "IntImm"
            for k in range(lanes):
                if k == 0:
                    text = base
                elif const_base and type(stride).__name__ == "IntImm":
                    text = self.int_lit(int(index.base.value) + int(stride.value) * k, t)
                elif type(stride).__name__ == "IntImm":
                    off = int(stride.value) * k
                    lit = self.int_lit(abs(off), t)
                    text = f"({base} {'+' if off >= 0 else '-'} {lit})"
                else:
                    s = self.ex(stride)
                    text = f"({base} + {self.int_lit(k, t)} * {s})"
                if t.bits == 64 or not t.is_int:
                    text = f"int({_strip(text)})"
                out.append(_strip(text))
            return out
        t = self.type_of(index)
        if t.lanes != lanes:
            raise self.fail(f"vector index of {t.lanes} lanes for {lanes} lanes")
        vec = self.ex(index)
        if not vec.isidentifier():
            vec = self.temp(t, vec)
        out = []
        for k in range(lanes):
            text = f"{vec}.{_SWIZZLE[k]}"
            if t.bits == 64 or not t.is_int:
                text = f"int({text})"
            out.append(text)
        return out

    def access(self, buf, indices, lanes_wanted: _Type, what: str):
        """(storage, list of element index texts, per-access type) for a load or store."""
        st = self.storage_of(buf)
        indices = list(indices)
        if len(indices) != 1:
            raise self.fail(f"{what} of buffer {buf.name} with {len(indices)} indices (not flattened)")
        index = indices[0]
        it = self.type_of(index)
        if it.lanes == 1:
            if lanes_wanted != st.dtype:
                raise self.fail(f"{what} of {lanes_wanted.tir} from buffer {buf.name} of {st.dtype.tir}")
            return st, [self.index_text(index)], st.dtype
        if st.dtype.lanes != 1:
            raise self.fail(f"vector-indexed {what} of vector-typed buffer {buf.name} ({st.dtype.tir})")
        if lanes_wanted != st.dtype.with_lanes(it.lanes):
            raise self.fail(f"{what} of {lanes_wanted.tir} from buffer {buf.name} of {st.dtype.tir}")
        return st, self.lane_indices(index, it.lanes), st.dtype
