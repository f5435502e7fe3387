"""The clang front end for hand-written CUDA C++, OpenCL C and Metal: libclang parses (reader.py,
with kernelrace's own headers in include/), and the lowering walks clang's AST into the kernel IR
(kernels.py: kernels, parameters, globals; stmts.py; exprs.py; calls.py; launches.py). See
docs/frontends.md for what each dialect reads and what gives `unknown`."""

from __future__ import annotations

from analyzer import ir
from analyzer.errors import KernelraceError
from analyzer.frontend.c_calls import VERIFIER_ANNOTATIONS


def lower_clang(text: str, lang: str, filename: str, include_dirs=(), macros=(),
                strict: bool = False, clean: bool = False) -> tuple[list[ir.Kernel], list[str]]:
    """Every kernel of one hand-written file, and the notes (headers not found, names made
    parameters); a file with no kernel is a one-line KernelraceError. An error clang reports inside
    a kernel (or a function it inlines) makes that kernel unknown; with `strict` (auto mode, after
    Lark failed) such a file is an error, as is one clang reports errors in and finds no kernel."""
    from analyzer.frontend.clang.kernels import ClangLowering
    from analyzer.frontend.clang.reader import parse
    parsed = parse(text, lang, filename, include_dirs, macros)
    if clean and (parsed.errors or parsed.notes or set(parsed.functions) - VERIFIER_ANNOTATIONS - {"__requires", "__assume"}):
        raise KernelraceError(f"{filename}: clang's reading is not clean")
    try:
        lowering = ClangLowering(parsed)
        if strict and lowering.file_scope_error():
            raise KernelraceError(lowering.file_scope_error())
        kernels = lowering.lower()
    except RecursionError:
        raise KernelraceError(f"{filename}: nested too deeply for the clang front end") from None
    except (ValueError, IndexError, KeyError, AttributeError, TypeError, StopIteration) as exc:
        # an AST shape the lowering does not expect, outside any one kernel: one line, never a traceback
        raise KernelraceError(f"{filename}: the clang front end could not read the file "
                              f"({type(exc).__name__}: {exc})") from None
    if strict and any(k.unsupported and k.unsupported[1].startswith("clang: ") for k in kernels):
        span, what = next(k.unsupported for k in kernels if k.unsupported and k.unsupported[1].startswith("clang: "))
        raise KernelraceError(f"{span}: {what[len('clang: '):]}")
    if clean and any(k.unsupported for k in kernels):
        raise KernelraceError(f"{filename}: a kernel clang does not lower")
    if not kernels and parsed.errors:
        raise KernelraceError(parsed.errors[0])
    if not kernels:
        what = {"cuda": "__global__ function", "metal": "kernel function", "opencl": "__kernel function"}[lang]
        raise KernelraceError(f"{filename}: no kernel found (no {what})")
    return kernels, parsed.notes
