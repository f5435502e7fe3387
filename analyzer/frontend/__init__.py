"""Front ends: parse a dialect's source with its Lark grammar and lower it into the kernel IR."""

from __future__ import annotations

import sys
from pathlib import Path

from analyzer import ir
from analyzer.errors import KernelraceError
from analyzer.frontend.dialects import lowering_for
from analyzer.frontend.lower import Unsupported, position
from analyzer.frontend.parser import parse
from analyzer.frontend.preprocess import PreprocessOptions, preprocess
from analyzer.frontend.spirv import SpirvLowering
from analyzer.frontend.wgsl import templating
from analyzer.frontend.wgsl.imports import compose
from analyzer.frontend.wgsl.lower import WgslLowering
from analyzer.frontend.wgsl.parse import parse_wgsl

EXTENSIONS = {".cu": "cuda", ".cuh": "cuda", ".metal": "metal", ".cl": "opencl", ".spvasm": "spirv", ".spv": "spirv",
              ".comp": "spirv", ".glsl": "spirv", ".wgsl": "wgsl"}


def lang_of(path: str) -> str | None:
    return EXTENSIONS.get(Path(path).suffix)


FRONTENDS = ("auto", "clang", "lark")
C_FAMILY = ("cuda", "metal", "opencl")


def lower_source(text: str, lang: str, filename: str,
                 pp: PreprocessOptions | None = None, frontend: str = "lark") -> list[ir.Kernel]:
    """Preprocess (when the file needs it), parse and lower every kernel of one file; any failure
    is a one-line KernelraceError. A C-family file is read by Lark or clang as `frontend` says;
    `auto`: clang where it reads the file cleanly, else Lark, else clang's reading where it reports no
    error at file scope (also where Lark leaves more kernels unknown than clang's reading does); where
    neither reads it, clang's reason where clang read the whole file without an error (no kernel,
    a construct not modelled), else Lark's error (docs/frontends.md)."""
    if lang in C_FAMILY and frontend == "clang":
        return _clang(text, lang, filename, pp)
    if lang in C_FAMILY and frontend == "auto":
        reading = _read_clang(text, lang, filename, pp)
        if reading is not None and reading.unclean is None:
            return _taken(reading)
        try:
            lark = _lower_lark(text, lang, filename, pp)
        except KernelraceError:
            if reading is not None and reading.definite:
                # clang read the whole file: its reason (no kernel, a construct not modelled) is the
                # file's, not the syntax error of Lark, which reads less
                raise KernelraceError(reading.definite) from None
            if reading is None or reading.refusal is not None:
                raise
            return _taken(reading)
        if reading is not None and reading.refusal is None and _unknown(reading.kernels) < _unknown(lark) and \
                len(reading.kernels) - _unknown(reading.kernels) >= len(lark) - _unknown(lark):
            return _taken(reading)   # Lark left a kernel unknown that clang reads (a build macro, a template)
        return lark
    return _lower_lark(text, lang, filename, pp)


def _unknown(kernels) -> int:
    return sum(1 for k in kernels if k.unsupported)


def _read_clang(text: str, lang: str, filename: str, pp: PreprocessOptions | None):
    """clang's reading of a file (parsed and lowered once), or None where clang cannot read it."""
    from analyzer.frontend.clang import read_clang
    try:
        return read_clang(text, lang, filename, pp.include_dirs if pp else (), pp.macros if pp else (),
                          pp.forced if pp else ())
    except KernelraceError:
        return None


def _taken(reading) -> list[ir.Kernel]:
    for note in reading.notes:   # headers not found, names the build was to define: said where the user looks
        print(f"kernelrace: note: {note}", file=sys.stderr)
    return reading.kernels


def _clang(text: str, lang: str, filename: str, pp: PreprocessOptions | None) -> list[ir.Kernel]:
    """`--frontend clang`: clang's kernels, whatever it reports (errors inside a kernel make it unknown)."""
    from analyzer.frontend.clang import read_clang
    reading = read_clang(text, lang, filename, pp.include_dirs if pp else (), pp.macros if pp else (),
                          pp.forced if pp else ())
    if reading.error:
        raise KernelraceError(reading.error)
    return _taken(reading)


def _lower_lark(text: str, lang: str, filename: str, pp: PreprocessOptions | None = None) -> list[ir.Kernel]:
    if lang == "wgsl":
        pp = pp or PreprocessOptions()
        if templating.needs_rendering(text, pp.macros):   # a template its host renders, with -D's values
            text, filename, rest = templating.render(text, filename, pp.macros, pp.include_dirs)
            pp = PreprocessOptions(pp.include_dirs, rest, pp.forced)
        # Preprocessed with its lines in place: positions and the lines shown are the file's own;
        # imported modules follow them, each line mapped back to its module (wgsl/imports.py).
        composed = compose(text, filename, pp)
        lowering = WgslLowering(parse_wgsl(composed.text, filename, composed.origins), text, filename, composed)
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
        if lang == "spirv":     # no preprocessor: positions are the file's own
            line, col = position(exc.node)
            raise KernelraceError(f"{filename}:{line}:{col}: unsupported construct: {exc.what}") from None
        span = lowering.span(exc.node)
        span = span.origin or span    # WGSL: an imported module's own line
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
