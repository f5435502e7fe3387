"""SPIR-V images (GLSL's `image2D` & co, `sampler2D`, `texture2D`, `sampler`): storage images as
memory, sampled images as values (analyzer/frontend/images.py places texels and says why).

A storage image (`OpTypeImage` with Sampled 2) has a buffer of its texels: `OpImageRead` reads one
texel and `OpImageWrite` writes one, each only inside the image. A sampled image is read-only in a
dispatch: `OpImageFetch`, `OpImageSample*`, `OpImageGather*` give values, pure functions of the
image and their operands. `OpImageQuerySize*` gives the image's extents (kernel parameters).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from analyzer import ir
from analyzer.frontend import images
from analyzer.frontend.lower import Unsupported
from analyzer.frontend.spirv.module import Ins
from analyzer.frontend.spirv.values import Vec

# Dim operand -> coordinates of a texel (a cube's face is its layer).
_COORDS = {"1D": 1, "2D": 2, "3D": 3, "Cube": 2, "Rect": 2, "Buffer": 1, "SubpassData": 2}
_FORMAT = re.compile(r"^(R|Rg|Rgb|Rgba)(\d+)")
_PACKED = {"Rgb10A2": 4, "Rgb10a2ui": 4, "R11fG11fB10f": 4}


@dataclass(frozen=True)
class Image:
    """An image, sampled image or sampler handle: the buffer of a storage image's texels (or a
    name for a sampled one's values) and the image's type id."""
    name: str
    ty: str


def texel_bytes(fmt: str) -> int:
    """Bytes of a texel of an image format; `Unknown` (a format the shader leaves to the host):
    a vec4 of 32-bit lanes, the same for every access of the image, which is all places need."""
    if fmt in _PACKED:
        return _PACKED[fmt]
    m = _FORMAT.match(fmt)
    return len(m.group(1)) * int(m.group(2)) // 8 if m else 16


def channels(fmt: str) -> int:
    m = _FORMAT.match(fmt)
    return len(m.group(1)) if m else 4


def image_parts(ty) -> tuple[int, bool, bool, str]:
    """(coordinates, arrayed, storage image, format) of an image Type (module.py)."""
    dim, arrayed, sampled, fmt = ty.storage.split(":")
    return _COORDS.get(dim, 2), arrayed == "1", sampled == "2", fmt


class ImagesMixin:
    """KernelLowering's image instructions."""

    def image(self, ins: Ins) -> list[ir.Stmt]:
        op, a = ins.op, ins.args
        if op in ("OpSampledImage", "OpImage"):
            h = self.value(a[1], ins)
            self.bind(ins, Image(h.name, a[0]) if isinstance(h, Image) else h)
            return []
        if op == "OpImageWrite":
            h = self._handle(a[0], ins)
        else:
            h = self._handle(a[1], ins)
        t = self.m.types[h.ty]
        if t.kind == "sampled_image":
            t = self.m.types[t.elem]
        ncoords, arrayed, storage, fmt = image_parts(t)
        if op.startswith("OpImageQuerySize"):
            self.bind(ins, _vec(images.query(self.kernel, h.name, ncoords + arrayed)))
            return []
        if op in ("OpImageQueryLevels", "OpImageQuerySamples"):
            self.bind(ins, ir.Call(f"{op}:{h.name}", ()))
            return []
        if storage and op in ("OpImageRead", "OpImageWrite"):
            coords = self._coords(a[2] if op == "OpImageRead" else a[1], ncoords + arrayed, ins)
            width = texel_bytes(fmt)
            span = self.span(ins)
            if op == "OpImageWrite":   # the texel's channels of the value written
                v = self.value(a[2], ins)
                kept = (v.lanes if isinstance(v, Vec) else (v,))[:channels(fmt)]
                value = ir.Call("vec", tuple(kept)) if len(kept) > 1 else kept[0]
                return [images.texel_write(self.kernel, h.name, width, coords, value, span, next(self.access_ids))]
            held = self.fresh(f"{h.name}.texel")
            n = self.m.types[a[0]].count or 1
            lanes = channels(fmt)    # what memory holds of a texel; a read gives (r, 0, 0, 1) & co
            texel = (ir.Var(held),) if lanes == 1 else tuple(ir.Call(f"lane{i}", (ir.Var(held),)) for i in range(lanes))
            filler = (ir.Const(0),) * max(0, 3 - lanes) + (ir.Const(1),)
            out = (texel + filler)[:n] if n > lanes else texel[:n]
            self.bind(ins, Vec(out) if n > 1 else out[0])
            return [images.texel_read(self.kernel, h.name, width, coords, held, span, next(self.access_ids))]
        if not storage and op.startswith(("OpImageFetch", "OpImageSample", "OpImageGather", "OpImageDref",
                                          "OpImageRead")):
            operands = tuple(self._operand(x, ins) for x in a[2:] if not _is_word(x))
            n = self.m.types[a[0]].count or 1
            lanes = tuple(ir.Call(f"{ir.IMAGE_READ}{op}:{h.name}.{i}", operands) for i in range(n))
            self.bind(ins, Vec(lanes) if n > 1 else lanes[0])
            return []
        raise Unsupported(ins.node, f"{op} on a{' storage' if storage else ' sampled'} image")

    def _handle(self, ident: str, ins: Ins) -> Image:
        h = self.value(ident, ins)
        if not isinstance(h, Image):
            raise Unsupported(ins.node, f"{ins.op} of something other than an image")
        return h

    def _coords(self, ident: str, n: int, ins: Ins) -> tuple[ir.Expr, ...]:
        v = self.value(ident, ins)
        lanes = v.lanes if isinstance(v, Vec) else (v,)
        if len(lanes) < n:
            raise Unsupported(ins.node, f"{ins.op} with {len(lanes)} coordinates for a {n}-coordinate image")
        return tuple(lanes[:n])

    def _operand(self, ident: str, ins: Ins) -> ir.Expr:
        if isinstance(self.value(ident, ins), Image):
            raise Unsupported(ins.node, f"{ins.op} with an image among its operands")
        return self.scalar(ident, ins)


def _vec(comps: tuple) -> object:
    return Vec(comps) if len(comps) > 1 else comps[0]


def _is_word(x: str) -> bool:
    """An image operands mask word (`Lod`, `Grad|ConstOffset`), not an id."""
    return not x.startswith("%")
