"""OpenCL images in the clang lowering: an image parameter is memory of its own (images.py: one
texel per address, the extents parameters named after the image), `write_image*` a texel write done
only inside the image, `read_image*` of a `read_write` image a texel read, of a `read_only` one a
value (the image cannot change during the dispatch), `get_image_*` its extents."""

from __future__ import annotations

import re
from dataclasses import dataclass

from analyzer import ir
from analyzer.frontend import images
from analyzer.frontend.c_tree import Unsupported
from analyzer.frontend.c_values import Scalar, Vector

TEXEL = 16   # one texel an address unit of 16 bytes, whatever the format: a texel is one place
_DIMS = {"image1d_t": 1, "image1d_buffer_t": 1, "image1d_array_t": 2, "image2d_t": 2, "image2d_array_t": 3,
         "image3d_t": 3, "image2d_depth_t": 2, "image2d_array_depth_t": 3}
_LANE_TYPE = {"f": "float", "h": "half", "i": "int", "ui": "uint"}
_QUERY = {"get_image_width": 0, "get_image_height": 1, "get_image_depth": 2}


@dataclass(frozen=True)
class Image:
    name: str
    dims: int
    access: str   # read_only | write_only | read_write


def image_type(spelling: str) -> tuple[int, str] | None:
    """(coordinate dimensions, access) of an OpenCL image type's spelling, or None."""
    m = re.search(r"\b(image\w+_t)\b", spelling)
    if m is None or m.group(1) not in _DIMS:
        return None
    access = "write_only" if "write_only" in spelling else "read_write" if "read_write" in spelling else "read_only"
    return _DIMS[m.group(1)], access


class ClangImages:
    """Image parameters and the image built-ins; mixed into ClangLowering."""

    def declare_image(self, name: str, dims: int, access: str) -> Image:
        self.kernel.buffers[name] = ir.Buffer(name, ir.GLOBAL, "float4", TEXEL)
        return Image(name, dims, access)

    def image_call(self, fn: str, args, c):
        """The value of an image built-in (a write's statement goes to `pending`), or None."""
        if not (fn.startswith(("read_image", "write_image")) or fn in _QUERY or fn == "get_image_dim"):
            return None
        if not args:
            return None
        img = self.rvalue(args[0])
        if not isinstance(img, Image):
            raise Unsupported(c, f"'{fn}' of an image that is no kernel parameter")
        if fn in _QUERY:
            return Scalar(images.extent(self.kernel, img.name, _QUERY[fn]), "int")
        if fn == "get_image_dim":
            comps = images.query(self.kernel, img.name, min(img.dims, 3))
            return Vector(comps + ((ir.Const(0),) if len(comps) == 3 else ()), f"int{len(comps) + (len(comps) == 3)}")
        m = re.fullmatch(r"(read|write)_image(f|h|i|ui)", fn)
        if m is None:
            raise Unsupported(c, f"'{fn}': an image built-in kernelrace does not model")
        lane = _LANE_TYPE[m.group(2)]
        span = self.span(c)
        coord = self.rvalue(args[-1] if m.group(1) == "read" else args[1])
        coords = self._image_coords(coord, img, c)
        if m.group(1) == "write":
            if len(args) != 3:
                raise Unsupported(c, f"'{fn}' with {len(args)} arguments (a mip level)")
            value = self.rvalue(args[2])
            comps = value.comps if isinstance(value, Vector) else (self._scalar(value),)
            self.pending.append(images.texel_write(self.kernel, img.name, TEXEL, coords, ir.Call("vec", tuple(comps)),
                                                   span, next(self.access_ids)))
            return Scalar(ir.Const(0), "int")
        if img.access == "read_write":
            var = self.fresh_var(f"{img.name}.texel")
            self.pending.append(images.texel_read(self.kernel, img.name, TEXEL, coords, var, span,
                                                  next(self.access_ids)))
            return Vector(tuple(ir.Call(f"lane{i}", (ir.Var(var),)) for i in range(4)), f"{lane}4")
        # a read-only image cannot change while the kernel runs: a value of its coordinates
        cs = tuple(coords)
        return Vector(tuple(ir.Call(f"image:{img.name}.{i}", cs) for i in range(4)), f"{lane}4")

    def _image_coords(self, coord, img: Image, c) -> tuple[ir.Expr, ...]:
        comps = coord.comps if isinstance(coord, Vector) else (self._scalar(coord),)
        if len(comps) < img.dims:
            raise Unsupported(c, f"image coordinates of {len(comps)} lanes for a {img.dims}-dimensional image")
        return tuple(comps[:img.dims])
