"""Where a texel lies (analyzer/frontend/images.py): rows MAX_EXTENT texels apart, so that a texel's
address is linear in its coordinates (no product with a symbolic extent), and the extents of the
axes that rows and planes are placed by stay within MAX_EXTENT, which keeps distinct texels apart."""

from __future__ import annotations

from analyzer import ir
from analyzer.frontend import lower_source
from analyzer.frontend.images import MAX_EXTENT
from analyzer.frontend.spirv_tools import compile_glsl, disassemble

WGSL = """
@group(0) @binding(0) var flat: texture_storage_2d<r32float, write>;
@group(0) @binding(1) var vol: texture_storage_3d<r32float, write>;
@group(0) @binding(2) var line: texture_storage_1d<r32float, write>;

@compute @workgroup_size(8, 8)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
  textureStore(flat, gid.xy, vec4<f32>(1.0));
  textureStore(vol, gid, vec4<f32>(1.0));
  textureStore(line, gid.x, vec4<f32>(1.0));
}
"""

GLSL = """#version 450
layout(local_size_x = 8, local_size_y = 8) in;
layout(binding = 0, r32f) uniform writeonly image2D img;
void main() {
  imageStore(img, ivec2(gl_GlobalInvocationID.xy), vec4(1.0));
}
"""


def _writes(kernel: ir.Kernel) -> dict[str, ir.Access]:
    out = {}

    def walk(stmts):
        for s in stmts:
            if isinstance(s, ir.MemOp) and s.access.is_write:
                out[s.access.buffer] = s.access
            for child in ("then", "orelse", "body"):
                walk(getattr(s, child, None) or [])
    walk(kernel.body)
    return out


def _params(e) -> set[str]:
    if isinstance(e, ir.Param):
        return {e.name}
    return set().union(set(), *(_params(x) for x in ir.operands(e)))


def _no_extent_in(offset, image: str) -> bool:
    return not any(p.startswith(image + ".") for p in _params(offset))


def test_a_wgsl_texel_is_placed_without_the_extents():
    (k,) = lower_source(WGSL, "wgsl", "t.wgsl")
    writes = _writes(k)
    for image in ("flat", "vol", "line"):
        assert _no_extent_in(writes[image].offset, image), image
    # Rows and planes are MAX_EXTENT texels apart: the axes they are placed by are bounded by it,
    # the outermost axis (and a 1-D texture's only one) is not.
    assert k.param_ranges["flat.width"] == (1, MAX_EXTENT)
    assert k.param_ranges["flat.height"] == (1, 2**31 - 1)
    assert k.param_ranges["vol.width"] == k.param_ranges["vol.height"] == (1, MAX_EXTENT)
    assert k.param_ranges["vol.depth_or_layers"] == (1, 2**31 - 1)
    assert k.param_ranges["line.width"] == (1, 2**31 - 1)


def test_a_glsl_image_texel_is_placed_without_the_extents():
    asm = disassemble(compile_glsl(GLSL, "t.comp"), "t.comp")
    (k,) = lower_source(asm, "spirv", "t.comp.spvasm")
    (acc,) = _writes(k).values()
    assert _no_extent_in(acc.offset, acc.buffer)
    assert k.param_ranges[f"{acc.buffer}.width"] == (1, MAX_EXTENT)

