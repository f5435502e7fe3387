"""Translate TVM's lowered device TIR (target ``vulkan``) into a GLSL 4.50 compute shader.

The TVM wheel has no Vulkan codegen, so the SPIR-V a Vulkan user would get is reproduced by
writing the device PrimFunc (after TVM's default pipeline and the host/device split) as GLSL and
compiling that with glslang. What matters downstream is that the shader performs exactly the TIR's
memory accesses, barriers and control flow:

- every buffer load and store is emitted once, in program order, at the TIR's element index into
  the buffer as declared; vector accesses to scalar buffers become one scalar access per lane, in
  lane order (as TVM's SPIR-V codegen scalarizes them); a vector-typed buffer (``float16x4``)
  keeps one access per element;
- ``tvm_storage_sync("shared")`` is ``barrier()``, ``("warp")`` is ``subgroupBarrier()``, exactly
  where TIR has them; every loop (``unroll`` and ``vectorized`` ones too) and branch is kept;
- a load TIR evaluates conditionally (a branch of ``if_then_else``) stays behind an ``if``; loads
  TIR evaluates unconditionally (both operands of ``&&``, ``||`` and ``Select``, which TVM's
  SPIR-V codegen evaluates eagerly) are evaluated unconditionally, and ``For`` bounds once;
- integer ``Div`` is GLSL's truncating ``/``; ``Mod``, ``FloorDiv`` and ``FloorMod`` on signed
  integers go through small pure helper functions (glslang compiles ``%`` to ``OpSMod``, whose sign
  follows the divisor, so C's ``%`` cannot be written as ``%``).

Buffers: each handle parameter is a ``std430`` block at set 0, binding = its index among the
handle parameters; a view of it under another element type is one more block at the same binding
(member ``<param>_as_<dtype>``). Shared allocations are ``shared`` arrays at global scope, local
ones function-local arrays; a shared or local buffer re-viewed under another element type is
rejected (type punning of workgroup memory is not modelled). GLSL cannot index with a 64-bit
integer: an ``int64`` index is written ``int(index)``.

Anything not modelled raises :class:`KernelraceError` naming the construct and the kernel.
"""

from __future__ import annotations

import re

from analyzer.errors import KernelraceError
from analyzer.tvm.glsl.buffers import BufferMixin, _Storage
from analyzer.tvm.glsl.emitter import EmitterMixin
from analyzer.tvm.glsl.expressions import ExpressionMixin
from analyzer.tvm.glsl.intrinsics import IntrinsicMixin
from analyzer.tvm.glsl.statements import StatementMixin
from analyzer.tvm.glsl.syntax import _EXT_ORDER, _RESERVED, _Type, _parse_dtype

__all__ = ["translate"]


class _Translator(StatementMixin, ExpressionMixin, IntrinsicMixin, BufferMixin, EmitterMixin):
    """The translation state, the parameter bindings and the shader text; the rest is in `glsl/`."""

    def __init__(self, func, name: str):
        self.func = func
        self.kernel = name
        self.out: list[str] = []
        self.indent = 1
        self.scopes: list[dict[int, str]] = [{}]
        self.used: set[str] = set(_RESERVED)
        self.tmp_counter = 0
        self.ext: set[str] = set()
        self.helpers: dict[str, str] = {}
        self.shared_decls: list[str] = []
        self.storage: dict[int, _Storage] = {}
        self.local_size: dict[str, int] = {}
        self.grid: dict[str, str] = {}
        self.params: dict[int, str] = {}              # scalar parameter -> params.NAME
        self.handles: dict[int, tuple[str, _Type, int]] = {}   # handle -> (member, elem type, binding)
        self.handle_order: list[int] = []
        self.aliases: dict[tuple[int, str], str] = {}  # (handle, dtype) -> alias member name
        self.alias_order: list[tuple[int, _Type, str]] = []
        self.push: list[tuple[str, _Type]] = []
        self.memo: dict = {}
        self.hoist = False

    # ---------------------------------------------------------------- whole function
    def run(self) -> str:
        func = self.func
        binding = 0
        for p in func.params:
            ty = p.ty
            if type(ty).__name__ == "PointerType":
                elem = ty.element_type
                dt = getattr(elem, "dtype", None)
                t = _parse_dtype(dt)
                if t is None:
                    raise self.fail(f"handle parameter {p.name} to {elem}")
                if t.is_bool:
                    raise self.fail(f"handle parameter {p.name} to bool (storage layout of bool)")
                member = self.ident(p.name)
                self.use_type(t, storage=True)
                self.handles[p.__chandle__()] = (member, t, binding)
                self.handle_order.append(p.__chandle__())
                binding += 1
            elif type(ty).__name__ == "PrimType":
                t = _parse_dtype(ty.dtype)
                if t is None or t.lanes != 1:
                    raise self.fail(f"scalar parameter {p.name} of type {ty.dtype}")
                self.use_type(t, storage=True)
                member = re.sub(r"[^A-Za-z0-9_]", "_", p.name)
                if member in [m for m, _ in self.push] or member[0].isdigit() or member in _RESERVED:
                    member = f"p_{member}_{len(self.push)}"
                self.push.append((member, t))
                self.params[p.__chandle__()] = f"params.{member}"
            else:
                raise self.fail(f"parameter {p.name} of type {ty}")
        self.blocks = {root: self.ident(f"{self.handles[root][0]}_buf") for root in self.handle_order}

        self.st(func.body)
        return self.render()

    def render(self) -> str:
        lines = [f"// kernel {self.kernel}: GLSL translation of TVM's lowered device TIR (target vulkan)",
                 "// generated by kernelrace (analyzer/tvm/tir_glsl.py): every TIR buffer access, barrier,",
                 "// loop and branch is kept, in program order",
                 "#version 450"]
        for ext in _EXT_ORDER:
            if ext in self.ext:
                lines.append(f"#extension {ext} : require")
        if self.grid:
            lines.append("// grid: " + ", ".join(f"{k} = {v}" for k, v in sorted(self.grid.items())))
        x, y, z = (self.local_size.get(d, 1) for d in "xyz")
        lines.append(f"layout(local_size_x = {x}, local_size_y = {y}, local_size_z = {z}) in;")
        lines.append("")
        for root in self.handle_order:
            member, t, binding = self.handles[root]
            lines.append(f"layout(std430, set = 0, binding = {binding}) buffer {self.blocks[root]} "
                         f"{{ {t.glsl} {member}[]; }};")
            for r, at, amember in self.alias_order:
                if r == root:
                    lines.append(f"layout(std430, set = 0, binding = {binding}) buffer {amember}_buf "
                                 f"{{ {at.glsl} {amember}[]; }};")
        if self.push:
            members = " ".join(f"{t.glsl} {m};" for m, t in self.push)
            lines.append(f"layout(push_constant) uniform Params {{ {members} }} params;")
        if self.shared_decls:
            lines.append("")
            lines.extend(self.shared_decls)
        if self.helpers:
            lines.append("")
            lines.append("// pure helpers for TIR semantics GLSL lacks (no memory access)")
            lines.extend(self.helpers.values())
        lines.append("")
        lines.append("void main() {")
        lines.extend(self.out)
        lines.append("}")
        return "\n".join(lines) + "\n"


def translate(func, name: str) -> str:
    """GLSL compute shader source for one device PrimFunc (after TVM's default pipeline and host/device split)."""
    try:
        return _Translator(func, name).run()
    except KernelraceError:
        raise
    except RecursionError as exc:
        raise KernelraceError(f"kernel {name} is nested too deeply to translate") from exc
