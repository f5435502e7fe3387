"""Images (storage textures) as memory, alike in the dialects that have them (WGSL, SPIR-V).

An image's texels are one address each: the texel at coordinates (x, y, layer or z) lies at
`((z * height + y) * width + x) * texel_bytes` of the image's buffer, the extents being kernel
parameters named after the image (`img.width`, `img.height`, `img.depth_or_layers`). A read or
write happens only when its coordinates lie inside the image: WGSL skips an access outside a
storage texture, and one outside a Vulkan image is undefined behaviour (a bug of its own, not a
race). Reads of sampled images are values (the image is read-only in a dispatch).
"""

from __future__ import annotations

from analyzer import ir

EXTENTS = ("width", "height", "depth_or_layers")


def extent(kernel: ir.Kernel, image: str, axis: int) -> ir.Expr:
    """The image's extent along `axis` (x, y, then layers or depth): a kernel parameter."""
    name = f"{image}.{EXTENTS[axis]}"
    if name not in kernel.params:
        kernel.params.append(name)
        kernel.param_ranges[name] = (1, 2**31 - 1)
    return ir.Param(name)


def texel_place(kernel: ir.Kernel, image: str, texel_bytes: int,
                coords: tuple[ir.Expr, ...]) -> tuple[ir.Expr, ir.Expr]:
    """(the byte offset of the texel at `coords`, the condition that it lies inside the image)."""
    offset: ir.Expr = ir.Const(0)
    inside: ir.Expr = ir.Const(1)
    for axis, c in reversed(list(enumerate(coords))):
        size = extent(kernel, image, axis)
        offset = ir.BinOp("+", ir.BinOp("*", offset, size), c)
        inside = ir.BinOp("&&", inside, ir.BinOp("&&", ir.BinOp(">=", c, ir.Const(0)), ir.BinOp("<", c, size)))
    return ir.BinOp("*", offset, ir.Const(texel_bytes)), inside


def texel_write(kernel: ir.Kernel, image: str, texel_bytes: int, coords: tuple[ir.Expr, ...], value: ir.Expr,
                span: ir.Span, access_id: int) -> ir.Stmt:
    """A texel's write, done only inside the image."""
    offset, inside = texel_place(kernel, image, texel_bytes, coords)
    acc = ir.Access(image, ir.GLOBAL, offset, texel_bytes, True, span, elem_size=texel_bytes, value=value,
                    id=access_id)
    return ir.If(inside, [ir.MemOp(acc)], [], span)


def texel_read(kernel: ir.Kernel, image: str, texel_bytes: int, coords: tuple[ir.Expr, ...], into: str,
               span: ir.Span, access_id: int) -> ir.Stmt:
    """A texel's read into the variable `into` (0 outside the image, where nothing is read)."""
    offset, inside = texel_place(kernel, image, texel_bytes, coords)
    acc = ir.Access(image, ir.GLOBAL, offset, texel_bytes, False, span, elem_size=texel_bytes, id=access_id)
    return ir.If(inside, [ir.Assign(into, ir.Read(acc), span)], [ir.Assign(into, ir.Const(0), span)], span)


def query(kernel: ir.Kernel, image: str, axes: int) -> tuple[ir.Expr, ...]:
    """An image size query: the extents of its first `axes` axes."""
    return tuple(extent(kernel, image, i) for i in range(axes))
