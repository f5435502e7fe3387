"""The clang front end for hand-written CUDA C++, OpenCL C and Metal: libclang parses (reader.py,
with kernelrace's own headers in include/), and the lowering walks clang's AST into the kernel IR
(kernels.py: kernels, parameters, globals; stmts.py; ranges.py: range-for; stores.py; exprs.py; lanes.py:
lanes chosen by a variable or stored in memory; calls.py; metal.py: Metal's SIMD-group matrices, textures
and vectors from lanes; wmma.py: CUDA's Tensor Core fragments; cub.py: cub's block collectives; macro_accessors.py: what a
macro's expansion hides (accessors and literals its definition spells); chosen.py: a pointer chosen between two buffers;
symbolic_dims.py: array dimensions sized by a template parameter; dependent.py; launches.py).
See docs/frontends.md for what each dialect reads and what gives `unknown`."""

from __future__ import annotations

from dataclasses import dataclass

from analyzer import ir
from analyzer.errors import KernelraceError
from analyzer.frontend.c_calls import VERIFIER_ANNOTATIONS

_STATED = VERIFIER_ANNOTATIONS | {"__requires", "__assume"}   # names a file may use undeclared, on purpose


@dataclass
class Reading:
    """What clang made of one file: its kernels (or the one-line error), the notes, and what
    `auto` decides by (`clean`, `refusal`)."""
    kernels: list
    notes: list[str]
    error: str | None          # the file could not be lowered at all
    unclean: str | None        # why the reading is not clean (an error, a note, a kernel not lowered)
    refusal: str | None        # why auto, after Lark failed, does not take it either
    # The file's error where clang read its kernels (the first uses a construct not modelled) or read
    # it all, every header found, without an error and found none: what auto reports where Lark fails
    # too, not Lark's error
    definite: str | None = None


def read_clang(text: str, lang: str, filename: str, include_dirs=(), macros=(), forced=()) -> Reading:
    """Parse and lower one file once; the caller decides what to take (lower_clang, or auto).
    libclang runs in a forked child (isolated.py): where it crashes on a file, that file is a
    one-line KernelraceError, never the end of kernelrace."""
    from analyzer.frontend.clang.isolated import in_child
    _warm()
    return in_child(_read, (text, lang, filename, tuple(include_dirs), tuple(macros), tuple(forced)), filename)


_warmed = False


def _warm() -> None:
    """Load libclang and import the lowering in this process, once, so that each forked child
    inherits them: a child importing them again spent 0.3 s of a CUDA file's 0.4 s of CPU. Loading
    parses nothing, so a file that crashes libclang still crashes in its child only; a library that
    will not load is reported by the child, as before."""
    global _warmed
    if _warmed:
        return
    _warmed = True
    try:
        import importlib
        for name in ("includer", "kernels", "reader"):
            importlib.import_module(f"analyzer.frontend.clang.{name}")
        importlib.import_module("analyzer.frontend.clang.fast_cursors").install()
    except Exception:   # noqa: BLE001 (the child meets it again and says it in one line)
        pass


def _read(text: str, lang: str, filename: str, include_dirs=(), macros=(), forced=()) -> Reading:
    from analyzer.frontend.clang import fast_cursors
    from analyzer.frontend.clang.kernels import ClangLowering
    from analyzer.frontend.clang.reader import parse
    fast_cursors.install()    # the bindings' guards and lists, without their cost (same results)
    parsed = parse(text, lang, filename, include_dirs, macros, forced)   # KernelraceError: nothing to read
    if lang == "cuda":
        parsed = _through_includer(parsed, text, filename, include_dirs, macros, forced)
    file_error = None
    try:
        lowering = ClangLowering(parsed)
        file_error = lowering.file_scope_error()
        kernels = lowering.lower()
    except RecursionError:
        return Reading([], parsed.notes, f"{filename}: nested too deeply for the clang front end", "error", "error")
    except (ValueError, IndexError, KeyError, AttributeError, TypeError, StopIteration) as exc:
        # an AST shape the lowering does not expect, outside any one kernel: one line, never a traceback
        why = f"{filename}: the clang front end could not read the file ({type(exc).__name__}: {exc})"
        return Reading([], parsed.notes, why, why, why)
    error = None
    if not kernels:
        what = {"cuda": "__global__ function", "metal": "kernel function", "opencl": "__kernel function"}[lang]
        error = parsed.errors[0] if parsed.errors else f"{filename}: no kernel found (no {what})"
    elif all(k.unsupported for k in kernels) and parsed.missing_headers:
        # a library kernelrace does not bundle (cute, cutlass, ThunderKittens): every kernel is
        # unknown, naming the headers not found, and the file is no error (a directory goes on)
        missing = ", ".join(parsed.missing_headers)
        for k in kernels:
            span, what = k.unsupported
            if what.startswith("clang:"):
                k.unsupported = (span, f"{what} ({missing} not found: its declarations are unknown)")
        file_error = None
    elif all(k.unsupported for k in kernels):
        span, what = kernels[0].unsupported
        error = f"{span.file}:{span.line}:{span.col}: unsupported construct: {what}"
    unclean = None
    if parsed.errors or parsed.notes or set(parsed.functions) - _STATED:
        unclean = "clang reported errors or notes"
    elif any(k.unsupported for k in kernels):
        unclean = "a kernel clang does not lower"
    # An error clang reports inside a kernel makes that kernel unknown, naming it; the others are read.
    refusal = error or file_error
    modelled = error and kernels and not kernels[0].unsupported[1].startswith("clang:")   # not a diagnostic of clang's
    # (no kernel, where a header is not found: its macros may have defined one; Lark's error says so)
    definite = error if error and (modelled or not kernels and not parsed.errors and not parsed.missing_headers) and \
        not file_error else None
    return Reading(kernels, parsed.notes, error, unclean or error, refusal, definite)


def _through_includer(parsed, text: str, filename: str, include_dirs, macros, forced):
    """The file read as a file of its folder that includes it sees it (includer.py), where alone it
    uses names it does not declare and that reading leaves fewer errors in the file."""
    from analyzer.frontend.clang.includer import fixable_errors, includers, own_errors
    from analyzer.frontend.clang.reader import parse
    if not fixable_errors(parsed):
        return parsed
    for inc in includers(filename):
        again = parse(text, "cuda", filename, include_dirs, macros, forced, includer=inc)
        if own_errors(again) < own_errors(parsed):
            again.notes.append(f"{filename}: read as {inc.where} includes it (its declarations before that line "
                               f"are the file's)")
            return again
    return parsed


def lower_clang(text: str, lang: str, filename: str, include_dirs=(), macros=(),
                forced=()) -> tuple[list[ir.Kernel], list[str]]:
    """Every kernel of one hand-written file, and the notes (headers not found, names made
    parameters); a file with no kernel (or none lowered) is a one-line KernelraceError. An error
    clang reports inside a kernel (or a function it inlines) makes that kernel unknown."""
    reading = read_clang(text, lang, filename, include_dirs, macros, forced)
    if reading.error:
        raise KernelraceError(reading.error)
    return reading.kernels, reading.notes
