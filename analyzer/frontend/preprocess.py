"""The C preprocessor for hand-written CUDA and Metal sources (pcpp, a C99 preprocessor in pure
Python), with a map from each output line back to the file and line it came from.

Runs only when a file needs it: a directive other than `#include <...>` and `#pragma` (which the
grammar reads as opaque items), and not TVM's emitted CUDA, whose preamble of `#if`/`#define`
lines is parsed as opaque items as it always was (TVM_PREAMBLE below), so TVM's output costs nothing.
System headers (`<cuda_runtime.h>`, `<metal_stdlib>`, ...) are satisfied by the front end's built-in
knowledge of their names and are dropped; a user header `#include "x.h"` is searched next to the
including file, then in the `-I` directories.
"""

from __future__ import annotations

import io
import os
import re
from dataclasses import dataclass, field

from analyzer.errors import KernelraceError

_DIRECTIVE = re.compile(r"^[ \t]*#[ \t]*(\w*)", re.MULTILINE)
_HARMLESS = {"include", "pragma", ""}
# TVM's CUDA preamble always carries this block, and its OpenCL output with half precision this
# #error line (in an #ifdef cl_khr_fp16 ... #else ... #endif block); their directives are parsed as opaque items.
TVM_PREAMBLE = re.compile(r"^#define TVM_ENABLE_L2_PREFETCH\b"
                          r'|^#error "Half precision floating point not supported by OpenCL implementation', re.MULTILINE)
_USER_INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*"', re.MULTILINE)

# Macros the compilers predefine, so that `#ifdef __CUDACC__` and arch tests take the device's arm.
PREDEFINED = {
    "cuda": {"__CUDACC__": "1", "__NVCC__": "1", "__CUDA_ARCH__": "800", "__CUDACC_VER_MAJOR__": "12",
             "__CUDACC_VER_MINOR__": "4", "__cplusplus": "201703L"},
    "metal": {"__METAL_VERSION__": "300", "__METAL__": "1", "__cplusplus": "201402L"},
    # OpenCL C 3.0 on a device with half and double precision (the extensions' feature macros).
    "opencl": {"__OPENCL_VERSION__": "300", "__OPENCL_C_VERSION__": "300", "CL_VERSION_1_0": "100",
               "CL_VERSION_1_1": "110", "CL_VERSION_1_2": "120", "CL_VERSION_2_0": "200", "CL_VERSION_3_0": "300",
               "cl_khr_fp16": "1", "cl_khr_fp64": "1", "__ENDIAN_LITTLE__": "1"},
}


@dataclass(frozen=True)
class PreprocessOptions:
    include_dirs: tuple[str, ...] = ()
    macros: tuple[tuple[str, str], ...] = ()     # -D NAME[=VALUE], in order
    forced: tuple[str, ...] = ()                 # --include FILE: read before the file's first line, in order


@dataclass
class Preprocessed:
    text: str
    # output line (1-based) -> (file, line); only when preprocessing changed the text
    line_map: list[tuple[str, int]] | None = field(default=None)

    def origin(self, line: int) -> tuple[str, int] | None:
        if self.line_map is None or not 0 < line <= len(self.line_map):
            return None
        return self.line_map[line - 1]


def needs_preprocessing(text: str, options: PreprocessOptions | None = None) -> bool:
    if options and (options.macros or options.forced):
        return True
    if ("#define TVM_ENABLE_L2_PREFETCH" in text or "#error \"Half precision" in text) and TVM_PREAMBLE.search(text):
        return False   # the cheap test first
    kinds = {m.group(1) for m in _DIRECTIVE.finditer(text)}
    if not kinds - _HARMLESS and not _USER_INCLUDE.search(text):
        return False
    return TVM_PREAMBLE.search(text) is None


def preprocess(text: str, dialect: str, filename: str,
               options: PreprocessOptions | None = None, force: bool = False) -> Preprocessed:
    """The file's text after preprocessing (unchanged when it needs none); errors are one line."""
    options = options or PreprocessOptions()
    if dialect == "spirv" or not (force or needs_preprocessing(text, options)):
        return Preprocessed(text)
    import pcpp   # imported here: TVM's output and most fixtures never need it

    class _Pre(pcpp.Preprocessor):
        def on_error(self, file, line, msg):
            msg = " ".join(str(msg).split())
            if not line or file in (None, "", "unknown"):
                # pcpp gives no position for a directive cut short at the end of the file
                # (`#ifdef` and nothing after it): the last directive's, or the file's last line.
                d = getattr(self, "lastdirective", None)
                file, line = (d.source, d.lineno) if d is not None and d.lineno else (filename, text.count("\n") + 1)
            raise KernelraceError(f"{_same_file(file or filename, filename)}:{line}:1: preprocessor error: {msg}")

        def on_include_not_found(self, is_malformed, is_system_include, curdir, includepath):
            if is_system_include and not is_malformed:
                # a system or toolkit header: the front end knows its names
                raise pcpp.OutputDirective(pcpp.Action.IgnoreAndRemove)
            where = f"{_same_file(self.lastdirective.source, filename)}:{self.lastdirective.lineno}:1"
            if is_malformed:
                raise KernelraceError(f"{where}: malformed #include: {includepath}")
            dirs = ", ".join(options.include_dirs) or "none given"
            raise KernelraceError(f"{where}: include file \"{includepath}\" not found "
                                  f"(searched next to the file and in -I directories: {dirs})")

        def on_directive_unknown(self, directive, toks, ifpassthru, precedingtoks):
            if directive.value == "error":
                msg = " ".join("".join(t.value for t in toks).split())
                raise KernelraceError(f"{_same_file(directive.source, filename)}:{directive.lineno}:1: #error {msg}")
            return True   # #pragma, #line, #warning, #ident...: no meaning to the analysis

        def on_comment(self, tok):
            return True

    pre = _Pre()
    pre.line_directive = None
    pre.compress = 0
    for name, value in PREDEFINED.get(dialect, {}).items():
        pre.define(f"{name} {value}")
    for name, value in options.macros:
        pre.define(f"{name} {value}")
    here = os.path.dirname(os.path.abspath(filename))
    pre.add_path(here)
    for d in options.include_dirs:
        pre.add_path(d)
    # --include: as if the file began with `#include "FILE"` lines; its own lines keep their numbers
    forced = "".join(f'#include "{os.path.abspath(f)}"\n' for f in options.forced)
    try:
        pre.parse(forced + text, filename)
        out = _collect(pre, filename)
        if forced and out.line_map is not None:
            n = len(options.forced)
            out.line_map = [(f, line - n) if f == filename else (f, line) for f, line in out.line_map]
        return out
    except KernelraceError:
        raise
    except RecursionError:
        raise KernelraceError(f"{filename}: preprocessor: macros nested too deeply") from None
    except Exception as exc:   # pcpp's own failures on malformed input: one line, not a traceback
        msg = " ".join(str(exc).split())
        last = getattr(pre, "lastdirective", None)   # where pcpp was: the last directive it read
        where = filename
        if last is not None and isinstance(getattr(last, "lineno", None), int):
            where = f"{_same_file(getattr(last, 'source', None) or filename, filename)}:{last.lineno}:1"
        raise KernelraceError(f"{where}: preprocessor error: {type(exc).__name__}: {msg}") from None


_WGSL_DIRECTIVE = re.compile(r"^[ \t]*#[ \t]*(\w+)(.*)$", re.MULTILINE)
# `#define_import_path` only names the file's own module (`#import` is resolved by
# frontend/wgsl/imports.py, which rewrites it before this runs).
_WGSL_MODULE_NAME = {"define_import_path"}


def preprocess_wgsl(text: str, filename: str, options: PreprocessOptions | None = None) -> str:
    """A WGSL file after the `#ifdef`/`#if`/`#define` preprocessing that build scripts and shader
    loaders expand (with the user's -D), its lines where they stand in the file, so positions stay
    the file's own."""
    options = options or PreprocessOptions()
    found = list(_WGSL_DIRECTIVE.finditer(text))
    if not found and not options.macros:
        return text
    kept = _WGSL_DIRECTIVE.sub(lambda m: "" if m.group(1) in _WGSL_MODULE_NAME else m.group(0), text)
    pre = preprocess(kept, "wgsl", filename, options, force=True)
    if pre.line_map is None:
        return pre.text
    lines = pre.text.split("\n")
    out: list[str] = []
    for (file, line), content in zip(pre.line_map, lines):
        if file != filename or line <= len(out):
            return pre.text   # an #include, or lines out of order: positions are the output's
        out.extend([""] * (line - 1 - len(out)))
        out.append(content)
    return "\n".join(out) + "\n"


def _collect(pre, filename: str) -> Preprocessed:
    """Output text and its line map: each output line maps to the (file, line) of the newline that
    ends it (newlines are never macro-expanded), so that macro bodies map to where they are used."""
    out, line_map, buf = [], [], io.StringIO()
    last = (filename, 1)
    while True:
        tok = pre.token()
        if tok is None:
            break
        value = tok.value
        if "\n" not in value:
            buf.write(value)
            continue
        pieces = value.split("\n")
        source = _same_file(getattr(tok, "source", None) or filename, filename)
        lineno = getattr(tok, "lineno", None)
        for k, piece in enumerate(pieces[:-1]):
            buf.write(piece)
            out.append(buf.getvalue())
            buf = io.StringIO()
            last = (source, lineno + k) if isinstance(lineno, int) else (last[0], last[1] + 1)
            line_map.append(last)
        buf.write(pieces[-1])
    rest = buf.getvalue()
    if rest:
        out.append(rest)
        line_map.append((last[0], last[1] + 1))
    return Preprocessed("\n".join(out) + "\n", line_map)


def _same_file(source: str, filename: str) -> str:
    """pcpp names files relative to the working directory; the file being checked keeps the name
    the user gave it."""
    if source == filename or os.path.abspath(source) == os.path.abspath(filename):
        return filename
    return source
