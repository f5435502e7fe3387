"""WGSL textures and samplers: their types, and the texture built-ins as memory accesses or values.

A storage texture (`texture_storage_2d<rgba8unorm, write>` and the 1-D, 2-D array and 3-D kinds) is
memory, as frontend/images.py places its texels: `textureStore` writes one texel and `textureLoad`
of a read-write one reads it, each only inside the texture (WGSL skips the others). Sampled and depth textures are read-only in
a dispatch: `textureLoad`, `textureSample*`, `textureGather*` of them are values (pure functions
of the texture and their arguments, as a load of a buffer nothing writes), and so are the
queries (`textureDimensions`, `textureNumLayers`, ...). Samplers are opaque handles.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from analyzer import ir
from analyzer.frontend import images
from analyzer.frontend.c_tree import Unsupported
from analyzer.frontend.wgsl.types import F32, I32, U32, Scalar, Ty, Vec

# Texel formats: channels and bits per channel; the channel type from the suffix.
_FORMAT = re.compile(r"^(r|rg|rgb|rgba|bgra)(\d+)(unorm|snorm|uint|sint|float)(-srgb)?$")
_PACKED = {"rgb10a2unorm": 4, "rgb10a2uint": 4, "rg11b10ufloat": 4}
_DIMS = {"1d": 1, "2d": 2, "2d_array": 2, "3d": 3, "cube": 2, "cube_array": 2, "multisampled_2d": 2}


@dataclass(frozen=True)
class Texture:
    """A texture or sampler variable: `ty.kind` is "texture", "storage_texture" or "sampler";
    `ty.kind` "binding_array" for a `binding_array` of them, whose element `index` picks one."""
    name: str
    ty: Ty
    index: ir.Expr | None = None

    def element(self, index: ir.Expr) -> "Texture":
        return Texture(self.name, self.ty.elem, index)


def texture_type(gen: str, args: list[str], node) -> Ty:
    """The Ty of `texture_*` (`gen`, with its template arguments' names) or `sampler*`."""
    if gen in ("sampler", "sampler_comparison"):
        return Ty("sampler")
    kind = gen.removeprefix("texture_")
    if kind.startswith("storage_"):
        dims = kind.removeprefix("storage_")
        if dims not in _DIMS or not args:
            raise Unsupported(node, f"type '{gen}'")
        fmt, access = args[0], (args[1] if len(args) > 1 else "write")
        return Ty("storage_texture", name=f"{dims}:{access}:{_channels(fmt)}", elem=_channel(fmt),
                  n=_texel_bytes(fmt, node))
    dims = kind.removeprefix("depth_")
    if dims not in _DIMS and kind not in ("external",):
        raise Unsupported(node, f"type '{gen}'")
    return Ty("texture", name=kind, elem=F32 if kind.startswith("depth") or not args else _sampled(args[0]))


def _channel(fmt: str) -> Ty:
    return U32 if fmt.endswith("uint") else I32 if fmt.endswith("sint") else F32


def _sampled(name: str) -> Ty:
    return {"u32": U32, "i32": I32}.get(name, F32)


def _channels(fmt: str) -> int:
    m = _FORMAT.match(fmt)
    return len(m.group(1)) if m else 4


def channels(ty: Ty) -> int:
    """A storage texture's channels per texel: the texel lanes memory holds."""
    return int(ty.name.split(":")[2])


def _texel_bytes(fmt: str, node) -> int:
    if fmt in _PACKED:
        return _PACKED[fmt]
    m = _FORMAT.match(fmt)
    if m is None:
        raise Unsupported(node, f"texel format '{fmt}'")
    return len(m.group(1)) * int(m.group(2)) // 8


def dims_of(ty: Ty) -> int:
    return _DIMS[ty.name.split(":")[0]]


def arrayed(ty: Ty) -> bool:
    return ty.name.split(":")[0] in ("2d_array", "cube_array")


def query(kernel: ir.Kernel, tex: Texture, fn: str):
    """`textureDimensions` & co: the texture's extents (kernel parameters)."""
    if tex.index is not None:   # one of a binding array's textures: its own extents, unknown
        return Scalar(ir.Call(f"{fn}:{tex.name}", (tex.index,)), U32) if fn != "textureDimensions" else \
            Vec(tuple(ir.Call(f"{fn}:{tex.name}.{i}", (tex.index,)) for i in range(2)), Ty("vec", elem=U32, n=2))
    if fn == "textureDimensions":
        n = dims_of(tex.ty) if tex.ty.kind == "storage_texture" else _DIMS.get(tex.ty.name.removeprefix("depth_"), 2)
        comps = images.query(kernel, tex.name, n)
        return Scalar(comps[0], U32) if n == 1 else Vec(comps, Ty("vec", elem=U32, n=n))
    if fn == "textureNumLayers":
        return Scalar(images.extent(kernel, tex.name, 2), U32)
    return Scalar(ir.Call(f"{fn}:{tex.name}", ()), U32)


def sampled_value(tex: Texture, fn: str, args: tuple[ir.Expr, ...]) -> Vec | Scalar:
    """What a read of a read-only texture gives: four lanes (one for a depth texture), each a
    pure function of the texture and the arguments."""
    elem = tex.ty.elem or F32
    args = ((tex.index,) if tex.index is not None else ()) + args    # a binding array's element
    if tex.ty.name.startswith("depth") and not fn.startswith("textureGather"):
        return Scalar(ir.Call(f"{ir.IMAGE_READ}{fn}:{tex.name}.0", args), F32)
    return Vec(tuple(ir.Call(f"{ir.IMAGE_READ}{fn}:{tex.name}.{i}", args) for i in range(4)),
               Ty("vec", elem=elem, n=4))
