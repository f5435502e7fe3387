"""Front ends: parse a dialect's source with its Lark grammar and lower it into the kernel IR."""

from __future__ import annotations

from pathlib import Path

from analyzer.errors import KernelraceError
from analyzer import ir
from analyzer.frontend.dialects import lowering_for
from analyzer.frontend.lower import Unsupported, position
from analyzer.frontend.parser import parse
from analyzer.frontend.preprocess import PreprocessOptions, preprocess, preprocess_wgsl
from analyzer.frontend.spirv import SpirvLowering
from analyzer.frontend.wgsl.lower import WgslLowering
from analyzer.frontend.wgsl.parse import parse_wgsl

EXTENSIONS = {".cu": "cuda", ".cuh": "cuda", ".metal": "metal", ".cl": "opencl", ".spvasm": "spirv", ".spv": "spirv",
              ".comp": "spirv", ".glsl": "spirv", ".wgsl": "wgsl"}


def lang_of(path: str) -> str | None:
    return EXTENSIONS.get(Path(path).suffix)


def lower_source(text: str, lang: str, filename: str,
                 pp: PreprocessOptions | None = None) -> list[ir.Kernel]:
    """Preprocess (when the file needs it), parse and lower every kernel of one file; any failure
    is a one-line KernelraceError."""
    if lang == "wgsl":
        # Preprocessed with its lines in place: positions and the lines shown are the file's own.
        lowering = WgslLowering(parse_wgsl(preprocess_wgsl(text, filename, pp), filename), text, filename)
    elif lang == "spirv":
        tree = parse(text, lang, filename)
        lowering = SpirvLowering(tree, text, filename)
    else:
        pre = preprocess(text, lang, filename, pp)
        tree = parse(pre.text, lang, filename, pre.line_map)
        lowering = lowering_for(lang)(tree, text, filename, pre)
    try:
        kernels = lowering.lower()
    except Unsupported as exc:
        if lang in ("spirv", "wgsl"):     # no preprocessor: positions are the file's own
            line, col = position(exc.node)
            raise KernelraceError(f"{filename}:{line}:{col}: unsupported construct: {exc.what}") from None
        span = lowering.span(exc.node)
        raise KernelraceError(f"{span.file}:{span.line}:{span.col}: unsupported construct: {exc.what}") from None
    if kernels and all(k.unsupported for k in kernels):
        # Nothing could be analysed: the first kernel's construct is the file's error.
        span, what = kernels[0].unsupported
        raise KernelraceError(f"{span.file}:{span.line}:{span.col}: unsupported construct: {what}")
    if not kernels:
        what = {"cuda": "__global__ function", "metal": "kernel function", "spirv": "GLCompute entry point",
                "wgsl": "@compute entry point", "opencl": "__kernel function"}[lang]
        raise KernelraceError(f"{filename}: no kernel found (no {what})")
    return kernels
