"""Running libclang on one hand-written file: per-dialect arguments, kernelrace's own bundled
headers (include/, found in either include form), Metal's `[[...]]` attributes renamed so that clang
keeps them, and names the build was expected to define (`BLOCK_SIZE`) declared as symbolic
parameters on a second parse.

libclang-ng (clang 22) is used rather than the `libclang` 18 wheel: its bindings expose
`Cursor.binary_operator`, and the unary operator kinds and constant evaluation are in its C API.
"""

from __future__ import annotations

import ctypes
import re
from dataclasses import dataclass, field
from pathlib import Path

from analyzer.errors import KernelraceError

INCLUDE = Path(__file__).with_name("include")

# Prefix of the constants a missing macro becomes: `BLOCK_SIZE` -> `__kernelrace_param_BLOCK_SIZE`.
PARAM_PREFIX = "__kernelrace_param_"
# The value clang sees for such a constant (array extents and `if constexpr` need one); the lowering
# reads the name as a symbolic parameter, never this value.
PARAM_SENTINEL = 0x4B52_0000

_ARGS = {
    "cuda": ["-x", "cuda", "--cuda-device-only", "-nocudainc", "-nocudalib", "--cuda-gpu-arch=sm_80", "-std=c++17",
             "-D__CUDACC__=1", "-D__NVCC__=1", "-D__CUDACC_VER_MAJOR__=12", "-D__CUDACC_VER_MINOR__=4",
             "-Wno-unknown-cuda-version", "-include", "kernelrace_cuda_prelude.h",
             # what nvcc takes with a warning and clang's C++17 refuses: `register`, `1.0fp` without a
             # space, a narrowing in a braced list
             "-Wno-register", "-Wno-reserved-user-defined-literal", "-Wno-c++11-narrowing"],
    "opencl": ["-x", "cl", "-cl-std=CL2.0", "-Xclang", "-finclude-default-header",
               "-Xclang", "-fdeclare-opencl-builtins", "-cl-ext=+cl_khr_fp16,+cl_khr_fp64"],
    # (NVPTX's target: its generic address space holds the others, so a member function or a copy
    # takes an object in device, threadgroup or constant memory, as Metal's do)
    "metal": ["-x", "c++", "-std=c++17", "-target", "nvptx64-nvidia-cuda", "-D__METAL_VERSION__=300", "-D__METAL__=1",
              "-include", "metal_stdlib", "-Wno-ignored-attributes", "-Wno-unknown-attributes"],
}

# `[[name]]` and `[[name(args)]]` (Metal's attributes): renamed to a macro of the same length that
# clang turns into `annotate("kr:name")`, kept in the AST on parameters and functions.
_ATTR = re.compile(r"\[\[\s*([A-Za-z_]\w*)(\s*\([^\[\]]*\))?\s*\]\]")
_ATTR_LIST = re.compile(r"\[\[([^\[\]]*,[^\[\]]*)\]\]")
# `template [[host_name("k_f32")]] [[kernel]] decltype(k<float>) k<float>;` (mlx): clang takes no
# attribute on an explicit instantiation; the template's own [[kernel]] is what marks it.
_INSTANCE_ATTRS = re.compile(r"\btemplate((?:\s|\\\n)*\[\[[^\[\]]*\]\](?:(?:\s|\\\n)*\[\[[^\[\]]*\]\])*)")
# `constant const int64_t strides[3]` as a kernel parameter: an array parameter is a pointer, which
# C++ lets no address space qualify; written `int64_t*strides   `, the same length.
_ARRAY_PARAM = re.compile(r"\b((?:constant|device|threadgroup)\s+(?:const\s+)?[A-Za-z_][\w:]*)\s(\s*)([A-Za-z_]\w*)"
                          r"(\s*\[\s*\w*\s*\])(?=\s*(?:_[Kk]_\w+(?:\([^()]*\))?\s*)*[,)])")
# A member function qualified by the address space of its object (`complex_t() threadgroup : ...`,
# `indexed() threadgroup = default;`): C++ has no such qualifier; blanked, the same length.
_METHOD_SPACE_ANY = re.compile(r"(\)\s*(?:const\s+)?)(thread|threadgroup|device|constant)\b(?=\s*(?:\{|:|;|->|=))")
# ... and a defaulted one blanked whole: it repeats the unqualified one (`MD() = default;`)
# (anchored after a `;`, `{` or `}`: one try a statement, linear in a file of long tables)
_DEFAULTED_SPACE = re.compile(r"(?:(?<=[;{}])|^)[^;{}]*\)\s*(?:const\s+)?(?:threadgroup|device|constant)\s*=\s*default\s*;")
_COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.DOTALL)
_ITEM = re.compile(r"^([A-Za-z_]\w*)(\s*\([^()]*\))?$")
_LOCAL_TG = re.compile(r"((?:^|[;{}])[ \t]*)threadgroup\b(?=[^;()\[]*(?:\[[^\];]*\][^;()\[]*)*;)", re.MULTILINE)
_UNDECLARED = re.compile(r"use of undeclared identifier '([A-Za-z_]\w*)'")
_NOT_FOUND = re.compile(r"'([^']+)' file not found")
_UNKNOWN_TYPE = re.compile(r"unknown type name '([A-Za-z_]\w*)'")
# Metal's vector constructors `float4(a, b.xy, c)`: C++ gives an ext_vector no constructor, so each
# `T(` is renamed a function of the same length that metal_stdlib declares (`_voat4(`), read by the
# lowering as the vector of its arguments' lanes (calls.py).
METAL_VECTOR_CTORS = {"_v" + f"{e}{n}"[2:]: f"{e}{n}" for e in (
    "char", "uchar", "short", "ushort", "int", "uint", "long", "ulong", "float", "half", "bool", "bfloat")
    for n in (2, 3, 4)}
_VECTOR_CTOR = re.compile(r"\b(" + "|".join(sorted(METAL_VECTOR_CTORS.values(), key=len, reverse=True))
                          + r")(?=\s*\()")
_CTOR_ALIAS = {t: a for a, t in METAL_VECTOR_CTORS.items()}
# ... and a vector variable direct-initialised, `const int2 offsets(0, row);`: C++ gives an ext_vector no
# constructor to call, so it is written `offsets = _nt2(0, row)` (a copy of the vector built by the
# renamed constructor). Not a declaration of a function: `float4 f(float4 a);`, `int2 g();`.
_VECTOR_DIRECT_INIT = re.compile(r"(?:(?<=[;{}])|^)(\s*(?:const\s+|constexpr\s+|thread\s+)*)(" +
                                 "|".join(sorted(METAL_VECTOR_CTORS.values(), key=len, reverse=True)) +
                                 r")(\s+)([A-Za-z_]\w*)(\s*)\(", re.MULTILINE)
_PARAM_DECL = re.compile(r"^\s*(?:const\s+|thread\s+|device\s+|constant\s+|threadgroup\s+)*[A-Za-z_][\w:<>]*"
                         r"(?:\s+|\s*[&*]+\s*)[A-Za-z_]\w*\s*(?:=[^,]*)?$")


# `threadgroup T* p`, `threadgroup const T *p`: a pointer (the declarator's `*`), not threadgroup storage
_POINTER_DECL = re.compile(r"\s*(?:const\s+)?[A-Za-z_][\w:]*(?:\s*<[^;]*>)?\s*(?:const\s*)?\*")
_CODE_BLOCK_AFTER = re.compile(r"(?:\)|\)\s*const|\belse|\bdo|[;{}:])\s*$")


def _vector_direct_inits(text: str) -> str:
    out, last = [], 0
    for m, in_code in _in_code_blocks(text, _VECTOR_DIRECT_INIT.finditer(text)):
        if m.start() < last:
            continue
        if not in_code:
            continue   # a declaration at file, namespace or class scope: a function's, never a variable's
        depth, j = 1, m.end()
        while j < len(text) and depth:
            depth += {"(": 1, ")": -1}.get(text[j], 0)
            j += 1
        args = text[m.end():j - 1]
        after = text[j:j + 40].lstrip()[:1]
        if depth or not args.strip() or after not in (";", ",") or \
                any(_PARAM_DECL.match(a) for a in re.split(r",(?![^()]*\))", args)):
            continue
        out.append(text[last:m.end() - 1])
        out.append(f"= {_CTOR_ALIAS[m.group(2)]}(")
        last = m.end()
    out.append(text[last:])
    return "".join(out)


def _in_code_blocks(text: str, matches):
    """Each match (in order) with whether the innermost brace before it opens a block of statements
    (a function's body), not a file's, namespace's or class's scope."""
    stack: list[bool] = []   # for each open brace: whether it opens a block of statements
    at = 0
    for m in matches:
        for i in range(at, m.start()):
            if text[i] == "{":
                stack.append(bool(_CODE_BLOCK_AFTER.search(text[max(0, i - 40):i])))
            elif text[i] == "}" and stack:
                stack.pop()
        at = max(at, m.start())
        yield m, bool(stack) and stack[-1]


def _local_threadgroups(text: str) -> str:
    """A threadgroup variable declared in a function is one per threadgroup: a static local for clang
    (C++ allows no automatic variable in another address space). A struct's member `threadgroup T* dst;`
    is not one (static, the constructor's `dst(dst_)` names no member: clang's error), nor is a
    function's pointer to threadgroup memory, `threadgroup T* p = tile + lid;` (one a thread)."""
    out, last = [], 0
    for m, in_code in _in_code_blocks(text, _LOCAL_TG.finditer(text)):
        decl = text[m.end():text.find(";", m.end())]
        if not in_code or _POINTER_DECL.match(decl):
            continue
        out.append(text[last:m.start()] + m.group(1) + "static threadgroup")
        last = m.end()
    out.append(text[last:])
    return "".join(out)


@dataclass
class Parsed:
    tu: object
    lang: str
    filename: str
    notes: list[str] = field(default_factory=list)
    params: list[str] = field(default_factory=list)   # undefined macros made parameters
    text: str = ""
    errors: list[str] = field(default_factory=list)   # clang's errors in the file (after the notes)
    # the same errors placed: (file, byte offset, line, column, message, the template instantiation
    # that reported it or '')
    placed: list[tuple] = field(default_factory=list)
    functions: list[str] = field(default_factory=list)   # called, declared nowhere: declared by kernelrace
    missing_headers: list[str] = field(default_factory=list)   # included, not found (read as empty)
    # headers clang read as rewritten (Metal's renamings; `static threadgroup` is longer than what it
    # renames): path -> the text whose offsets the AST's cursors give
    rewritten: dict[str, str] = field(default_factory=dict)
    defines: dict[str, str] = field(default_factory=dict)   # the -D macros, name -> value
    # read through an includer (includer.py): the files whose kernels are the file's (None: all)
    own_files: set[str] | None = None


def _cindex():
    try:
        import clang.cindex as ci
    except ImportError as exc:   # the package is a core dependency; say what is missing
        raise KernelraceError(f"the clang front end needs the libclang-ng package: {exc}") from None
    return ci


def metal_attributes(text: str) -> tuple[str, list[str]]:
    """The text with each `[[name(...)]]` renamed ` _K_name(...)` (`[[name]]`: ` _k_name`; the space
    parts it from a name written against it, `uint3 tid[[...]]`), same
    length, and the macro definitions the renamed names need."""
    names: dict[str, bool] = {}

    def one(name: str, args: str | None) -> str:
        names[name] = names.get(name, False) or bool(args)
        return f" _K_{name}{args.strip()}" if args else f" _k_{name}"

    def sub(m: re.Match) -> str:
        new = one(m.group(1), m.group(2))
        return new.ljust(len(m.group(0))) if len(new) <= len(m.group(0)) else new

    def sub_list(m: re.Match) -> str:   # [[kernel, max_total_threads_per_threadgroup(1024)]]
        items = [_ITEM.match(x.strip()) for x in re.split(r",(?![^()]*\))", m.group(1))]
        if not all(items):
            return m.group(0)
        new = " ".join(one(i.group(1), i.group(2)) for i in items)
        return new.ljust(len(m.group(0)))

    out = _INSTANCE_ATTRS.sub(lambda m: "template" + re.sub(r"[^\s\\]", " ", m.group(1)), text)
    out = instance_markers(out)
    out = _ATTR_LIST.sub(sub_list, out)   # first: `[[buffer(2), function_constant(f)]]` is a list
    out = _ATTR.sub(sub, out)
    out = _vector_direct_inits(out)
    out = _VECTOR_CTOR.sub(lambda m: _CTOR_ALIAS[m.group(1)], out)
    out = _DEFAULTED_SPACE.sub(lambda m: re.sub(r"[^\s\\]", " ", m.group(0)), out)
    out = _method_spaces(out)
    out = _ARRAY_PARAM.sub(lambda m: f"{m.group(1)}*{m.group(2)}{m.group(3)}" + " " * len(m.group(4)), out)
    out = _local_threadgroups(out)
    defs = []
    for name in names:
        defs.append(f'#define _k_{name} __attribute__((annotate("kr:{name}")))')
        defs.append(f'#define _K_{name}(...) __attribute__((annotate("kr:{name}", #__VA_ARGS__)))')
    return out, defs


# an explicit instantiation: `template` where a declaration starts (not `x.template f<T>()`, not a
# template's header `template <...>`, not `extern template`, which instantiates nothing here)
_EXPLICIT_TEMPLATE = re.compile(r"(?:(?<=[;{}\n\\])|^)[ \t]*template\b(?!\s*<)", re.MULTILINE)
_TEMPLATE_ID = re.compile(r"((?:::)?[A-Za-z_]\w*(?:\s*::\s*[A-Za-z_]\w*)*)\s*<")
INSTANCE_MARKER = "__kr_instance"


def instance_markers(text: str) -> str:
    """After each explicit instantiation of a function template, `template ... k<float, 4>(...);` and
    mlx's `template decltype(k<float, 4>) k<float, 4>;` (in its macros too), a marker on the same
    line, `static_assert(__kr_instance(&k<float, 4>));`, whose reference the lowering follows to
    clang's instantiated body (the specialization's own types, members and constants resolved).
    No line moves; a class's explicit instantiation gets none."""
    out, last = [], 0
    for m in _EXPLICIT_TEMPLATE.finditer(text):
        if m.start() < last:
            continue
        end = _declaration_end(text, m.end())
        if end is None:
            continue
        decl = text[m.end():end]
        if re.match(r"\s*(?:struct|class|union|enum)\b", decl):
            continue
        name = _declarator_id(decl)
        if name is None:
            continue
        out.append(text[last:end + 1])
        out.append(f" static_assert({INSTANCE_MARKER}(&{name}));")
        last = end + 1
    out.append(text[last:])
    return "".join(out)


def _declaration_end(text: str, at: int) -> int | None:
    """The `;` that ends the declaration from `at` (outside brackets); None at a body or the end."""
    depth = 0
    for i in range(at, min(len(text), at + 4000)):
        ch = text[i]
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        elif ch == "{" or depth < 0:
            return None
        elif ch == ";" and depth == 0:
            return i
    return None


def _declarator_id(decl: str) -> str | None:
    """The last template-id outside parentheses, followed by `(` or the end: `k<float, 4>`."""
    found, depth, i = None, 0, 0
    while i < len(decl):
        ch = decl[i]
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif depth == 0:
            m = _TEMPLATE_ID.match(decl, i)
            if m and (i == 0 or not (decl[i - 1].isalnum() or decl[i - 1] == "_")):
                close = _angle_end(decl, m.end())
                if close is not None:
                    rest = decl[close + 1:].replace("\\\n", " ").lstrip()
                    if rest == "" or rest.startswith("("):
                        found = re.sub(r"\s*\\\n\s*", " ", decl[i:close + 1]).strip()
                    i = close + 1
                    continue
        i += 1
    return found


def _angle_end(text: str, at: int) -> int | None:
    """The `>` closing the template argument list that opens before `at`."""
    depth, paren = 1, 0
    for i in range(at, len(text)):
        ch = text[i]
        if ch == "(":
            paren += 1
        elif ch == ")":
            paren -= 1
            if paren < 0:
                return None
        elif paren == 0 and ch == "<":
            depth += 1
        elif paren == 0 and ch == ">":
            depth -= 1
            if depth == 0:
                return i
        elif ch in ";{}":
            return None
    return None


def _method_spaces(text: str) -> str:
    """Member functions qualified by their object's address space, which C++ cannot overload on: the
    first of a class's members with one signature keeps its body (qualifier blanked), a repeat for
    another address space (`complex_t(U x) device : ...` after `complex_t(U x) thread : ...`) is
    blanked whole, its template header and body too (lines kept). Where a kernel calls a member
    only a dropped repeat declared, clang reports the call and that kernel is unknown."""
    matches = list(_METHOD_SPACE_ANY.finditer(text))
    if not matches:
        return text
    # the class each member is declared in: the innermost `{` open at its position (one pass)
    enclosing, stack, at = [], [], 0
    for m in matches:
        for i in range(at, m.start()):
            ch = text[i]
            if ch == "{":
                stack.append(i)
            elif ch == "}" and stack:
                stack.pop()
        at = m.start()
        enclosing.append(stack[-1] if stack else -1)
    out = list(text)
    seen: set = set()
    blanked_to = -1
    for m, cls in zip(matches, enclosing):
        if m.start() < blanked_to:
            continue
        start = max(text.rfind(ch, 0, m.start()) for ch in ";{}") + 1
        decl = _COMMENT.sub(" ", text[start:m.start(2)])
        # (the address spaces in the return type too: `device T& operator[](size_t) device` repeats
        # `thread T& operator[](size_t) thread`)
        sig = re.sub(r"\s*\b(?:thread|device|constant|threadgroup)\b\s*", " ", " ".join(decl.split())).strip()
        key = (cls, sig)
        if key not in seen:
            seen.add(key)
            if m.group(2) != "thread":
                out[m.start(2):m.end(2)] = " " * (m.end(2) - m.start(2))
            continue
        end = _member_end(text, m.end(2))
        if end is None:
            continue
        for i in range(start, end):
            if not text[i].isspace() and text[i] != "\\":
                out[i] = " "
        blanked_to = end
    return "".join(out)


def _member_end(text: str, at: int) -> int | None:
    """Where the member whose qualifier ends at `at` ends: after its `;` or its body's `}`."""
    depth = 0
    for i in range(at, len(text)):
        ch = text[i]
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch == ";" and depth == 0:
            return i + 1
        elif ch == "{" and depth == 0:
            level = 0
            for j in range(i, len(text)):
                if text[j] == "{":
                    level += 1
                elif text[j] == "}":
                    level -= 1
                    if level == 0:
                        return j + 1
            return None
    return None


def parse(text: str, lang: str, filename: str, include_dirs=(), macros=(), forced=(), includer=None) -> Parsed:
    """Parse one file; a header not found is a note, and an identifier the file never declares
    is declared (a missing macro: a symbolic parameter; a missing function: a function of its
    arguments) on one more parse. `forced` (--include): files read before the file's first line;
    `includer` (includer.Includer): the lines of a file including this one, read before them too."""
    ci = _cindex()
    depth = bracket_depth(text)
    if depth > MAX_BRACKET_DEPTH:
        # clang recurses once per level in this process: thousands of levels overflow its stack
        line, col = _too_deep_at(text)
        raise KernelraceError(f"{filename}:{line}:{col}: brackets nested {depth} deep (the clang front end reads at "
                              f"most {MAX_BRACKET_DEPTH})")
    args = list(_ARGS[lang]) + ["-ferror-limit=0"]   # errors in host code must not hide a kernel's
    args += ["-isystem", str(INCLUDE)] if lang != "opencl" else []
    for d in include_dirs:
        args += ["-I", str(d)]
    for name, value in macros:
        args.append(f"-D{name}={value}" if value != "" else f"-D{name}")
    args += ["-I", str(Path(filename).parent or ".")]
    for f in forced:
        args += ["-include", str(Path(f).resolve())]
    if includer is not None:
        args += ["-include", includer.first]
    src = text
    extra: list[str] = []
    headers: list[tuple[str, str]] = []
    if lang == "metal":
        src, extra = metal_attributes(text)
        # a forced include is read as an included header is, with the same renaming
        seen_from = "".join(f'#include "{Path(f).resolve()}"\n' for f in forced) + text
        for path, htext in _user_headers(seen_from, filename, include_dirs):
            new, defs = metal_attributes(htext)
            if new != htext:
                headers.append((path, new))
                extra += [d for d in defs if d not in extra]
    index = ci.Index.create()
    # Headers not found: empty stand-ins in a directory no one has (clang stops reporting errors
    # after a fatal one, so the parse is repeated without them to see the rest).
    stubs_dir = str(Path(filename).resolve().parent / "__kernelrace_missing__")
    stubs: dict[str, str] = {}
    notes: list[str] = []
    declared: list[str] = []
    missing: dict[str, bool] = {}
    host_cache: dict = {}
    type_names: set[str] = set()   # names also used as types: never a number's macro
    for _ in range(6):
        unsaved = [(filename, src)] + headers + [(f"{stubs_dir}/{h}", "") for h in stubs]
        unsaved += list(includer.files) if includer is not None else []
        all_args = args + ["-I", stubs_dir]
        if extra or declared:
            pre_name = str(Path(stubs_dir) / "__kernelrace_prelude.h")
            unsaved.append((pre_name, "\n".join(extra + declared) + "\n"))
            all_args += ["-include", pre_name]
        try:
            tu = index.parse(filename, args=all_args, unsaved_files=unsaved)
        except ci.TranslationUnitLoadError as exc:
            raise KernelraceError(f"{filename}: clang could not read the file: {exc}") from None
        new_headers, new_names = False, False
        for d in tu.diagnostics:
            if d.severity < ci.Diagnostic.Error:
                continue
            m = _NOT_FOUND.search(d.spelling)
            if m and m.group(1) not in stubs:
                stubs[m.group(1)] = _loc(d)
                new_headers = True
                continue
            m = _UNKNOWN_TYPE.search(d.spelling)
            if m:
                type_names.add(m.group(1))
            m = _UNDECLARED.search(d.spelling)
            if m and _qualifier(src, d, filename):
                type_names.add(m.group(1))
                continue
            if m and m.group(1) not in missing and not m.group(1).startswith(("_kr", "_k_", "_K_")) and not _in_system(d) and \
                    not (lang == "cuda" and _in_host_function(ci, tu, d, host_cache)):
                missing[m.group(1)] = _called(src, d, filename)
                new_names = True
        if new_headers:
            continue   # errors after a fatal one were not reported: look again first
        if not new_names:
            break
        declared = []
        for name, called in missing.items():
            if name in type_names:
                continue   # a type the build or another file defines: its uses stay clang's errors
            if called:
                declared.append(_function_decl(lang, name))
            else:
                declared.append(f"#define {name} {PARAM_PREFIX}{name}")
                declared.append(f"{'__constant ' if lang == 'opencl' else 'constexpr '}int {PARAM_PREFIX}{name} = "
                                f"{PARAM_SENTINEL + len(declared)};")
    quoted = [h for h in stubs if re.search(rf'#\s*include\s*"{re.escape(h)}"', text)]
    notes = [f"{where}: {h} not found: its declarations are unknown" + (" (give its directory with -I)" if h in quoted
                                                                        else "") for h, where in stubs.items()]
    out = Parsed(tu, lang, filename, notes, [n for n, called in missing.items() if not called and n not in type_names],
                 text)
    out.defines = {name: str(value) for name, value in macros}
    texts = dict(headers, **{filename: src})
    out.errors = [f"{_loc(d)}: {d.spelling}" for d in tu.diagnostics
                  if d.severity >= ci.Diagnostic.Error and not _NOT_FOUND.search(d.spelling) and not _in_marker(d, texts)]
    out.placed = []
    instance = ""
    for d in tu.diagnostics:
        if d.severity < ci.Diagnostic.Error or d.location.file is None or _NOT_FOUND.search(d.spelling) or \
                _in_marker(d, texts):
            continue
        # clang names the instantiation once, on its first error; the errors after it are in it too
        instance = _instance(d) if any("in instantiation of" in n.spelling for n in d.children) else instance
        out.placed.append((d.location.file.name, d.location.offset, d.location.line, d.location.column, d.spelling,
                           instance))
    out.functions = [n for n, called in missing.items() if called and n not in type_names]
    out.missing_headers = list(stubs)
    out.rewritten = dict(headers)
    if includer is not None:
        from analyzer.frontend.clang.includer import own_files
        out.own_files = own_files(tu, filename)
    for n in out.params:
        out.notes.append(f"{filename}: '{n}' is not defined in the file: a symbolic parameter "
                         f"(give its value with -D {n}=VALUE)")
    return out


def _in_marker(d, texts: dict) -> bool:
    """Whether a diagnostic is about a marker kernelrace wrote (instance_markers): one that names no
    specialization (an instantiation clang could not make) leaves its template read as a pattern."""
    if INSTANCE_MARKER in d.spelling:
        return True
    f = d.location.file
    text = texts.get(f.name) if f is not None else None
    if text is None:
        return False
    at = d.location.offset
    start = text.rfind("static_assert(" + INSTANCE_MARKER + "(", max(0, text.rfind("\n", 0, at)), at + 1)
    return start != -1 and at < text.find("));", start) + 3


def _instance(d) -> str:
    """The outermost function template specialization whose instantiation reported `d` ('' if none)."""
    names = [m.group(1) for n in d.children for m in [_INSTANTIATION.match(n.spelling)] if m]
    return names[-1] if names else ""


_INSTANTIATION = re.compile(r"in instantiation of function template specialization '([^']+)'")
MAX_BRACKET_DEPTH = 256
_INCLUDE_LINE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*([<"])([^>"]+)[>"]', re.MULTILINE)


def _user_headers(text: str, filename: str, include_dirs, limit: int = 400) -> list[tuple[str, str]]:
    """The user's headers a Metal file includes, directly or not (searched as clang would: next to
    the including file for the quoted form, then the -I folders; kernelrace's own are skipped): each
    read as text, for the same renaming as the file's own (mlx declares its kernels in headers)."""
    out: list[tuple[str, str]] = []
    seen: set[str] = set()
    todo = [(text, Path(filename).parent)]
    while todo and len(seen) < limit:
        body, here = todo.pop()
        for m in _INCLUDE_LINE.finditer(body):
            name = m.group(2)
            if (INCLUDE / name).is_file():
                continue
            dirs = ([here] if m.group(1) == '"' else []) + [Path(d) for d in include_dirs]
            found = next((d / name for d in dirs if (d / name).is_file()), None)
            if found is None:
                continue
            key = str(found.resolve())
            if key in seen:
                continue
            seen.add(key)
            try:
                htext = found.read_text(errors="replace")
            except OSError:
                continue
            out.append((str(found), htext))
            todo.append((htext, found.parent))
    return out


def bracket_depth(text: str) -> int:
    """The deepest nesting of (), [] and {} in the text (comments and literals counted too: an
    upper bound, in one pass)."""
    depth = best = 0
    for ch in text:
        if ch in "([{":
            depth += 1
            if depth > best:
                best = depth
        elif ch in ")]}":
            depth -= 1
    return best


def _too_deep_at(text: str) -> tuple[int, int]:
    """(line, column) of the first bracket past MAX_BRACKET_DEPTH."""
    depth = 0
    for i, ch in enumerate(text):
        if ch in "([{":
            depth += 1
            if depth > MAX_BRACKET_DEPTH:
                line = text.count("\n", 0, i) + 1
                return line, i - (text.rfind("\n", 0, i) + 1) + 1
        elif ch in ")]}":
            depth -= 1
    return 1, 1


def _in_system(diag) -> bool:
    """Whether a diagnostic is in a system header or kernelrace's own (a name a host library header
    lacks from kernelrace's small C headers is not one the user's build was to define)."""
    f = diag.location.file
    return f is None or _system_path(f.name)


def _system_path(name: str) -> bool:
    return name.startswith((str(INCLUDE), "/usr/", "/opt/")) or any(
        part in name for part in ("/site-packages/", "/include/c++/", "/lib/gcc/", "/lib/clang/"))


def _in_host_function(ci, tu, diag, cache: dict) -> bool:
    """Whether a CUDA diagnostic lies in the body of a host-only function (neither __device__ nor
    __global__) of the user's files: a name missing there is the host's business (no parse again to
    declare it). `cache` holds, per translation unit, each file's host-only function extents."""
    f = diag.location.file
    if f is None:
        return False
    if tu not in cache:
        cache.clear()
        cache[tu] = _host_extents(ci, tu)
    offset = diag.location.offset
    return any(a <= offset <= b for a, b in cache[tu].get(f.name, ()))


def _host_extents(ci, tu) -> dict:
    CK = ci.CursorKind
    fn_kinds = (CK.FUNCTION_DECL, CK.CXX_METHOD, CK.FUNCTION_TEMPLATE, CK.CONSTRUCTOR, CK.DESTRUCTOR)
    scopes = (CK.NAMESPACE, CK.LINKAGE_SPEC, CK.STRUCT_DECL, CK.CLASS_DECL, CK.CLASS_TEMPLATE, CK.UNEXPOSED_DECL)
    out: dict = {}
    stack = list(tu.cursor.get_children())
    while stack:
        c = stack.pop()
        loc = c.location
        if loc.file is None or _system_path(loc.file.name):
            continue
        if c.kind in scopes:
            stack.extend(c.get_children())
        elif c.kind in fn_kinds and c.is_definition() and not any(
                k.kind in (CK.CUDADEVICE_ATTR, CK.CUDAGLOBAL_ATTR) for k in c.get_children()):
            out.setdefault(loc.file.name, []).append((c.extent.start.offset, c.extent.end.offset))
    return out


def _function_decl(lang: str, name: str) -> str:
    """A function the file calls and never declares: any arguments, an int result."""
    if lang == "opencl":
        return f"int __attribute__((overloadable)) {name}();"
    spec = "__host__ __device__ " if lang == "cuda" else ""
    return f"template <class... _KrT> {spec}int {name}(_KrT...);"


def _called(src: str, diag, filename: str) -> bool:
    """Whether the undeclared name at the diagnostic is called (`f(`)."""
    return bool(re.match(r"[A-Za-z_]\w*\s*(\(|<)", _at(src, diag, filename)))


def _qualifier(src: str, diag, filename: str) -> bool:
    """Whether the undeclared name at the diagnostic qualifies another (`wmma::`, `std::`): a
    namespace or class of a header not found, never a number the build defines."""
    return bool(re.match(r"[A-Za-z_]\w*\s*::", _at(src, diag, filename)))


def _at(src: str, diag, filename: str) -> str:
    """The rest of the diagnostic's line from its column."""
    loc = diag.location
    if loc.file is None:
        return ""
    from analyzer.frontend.clang.cursors import _spelling
    spelled, offset = _spelling(loc)
    if spelled and (spelled, offset) != (loc.file.name, loc.offset):
        # inside a macro's expansion: the name as its definition spells it (`(N_GP)` in
        # `#define idx2(p, z) (p[((z) - 1) * (N_GP) + i])`, not the invocation `WDOT(21)`)
        try:
            data = src.encode() if spelled == filename else Path(spelled).read_bytes()
        except OSError:
            return ""
        return data[offset:].split(b"\n", 1)[0].decode(errors="replace")
    lines = src.split("\n") if loc.file.name == filename else _read_lines(loc.file.name)
    if not 0 < loc.line <= len(lines):
        return ""
    return lines[loc.line - 1][loc.column - 1:]


def _read_lines(path: str) -> list[str]:
    try:
        return Path(path).read_text(errors="replace").split("\n")
    except OSError:
        return []


def _loc(d) -> str:
    loc = d.location
    return f"{loc.file.name if loc.file else '?'}:{loc.line}:{loc.column}"


# ---------- the C API pieces the Python bindings leave out ----------

_UNARY = {1: "post++", 2: "post--", 3: "pre++", 4: "pre--", 5: "&", 6: "*", 7: "+", 8: "-", 9: "~", 10: "!",
          11: "__real", 12: "__imag", 13: "__extension__", 14: "co_await"}
_lib = None


def _capi():
    global _lib
    if _lib is None:
        ci = _cindex()
        lib = ci.conf.lib
        lib.clang_getCursorUnaryOperatorKind.argtypes = [ci.Cursor]
        lib.clang_getCursorUnaryOperatorKind.restype = ctypes.c_int
        lib.clang_Cursor_Evaluate.argtypes = [ci.Cursor]
        lib.clang_Cursor_Evaluate.restype = ctypes.c_void_p
        lib.clang_EvalResult_getKind.argtypes = [ctypes.c_void_p]
        lib.clang_EvalResult_getKind.restype = ctypes.c_int
        lib.clang_EvalResult_getAsLongLong.argtypes = [ctypes.c_void_p]
        lib.clang_EvalResult_getAsLongLong.restype = ctypes.c_longlong
        lib.clang_EvalResult_isUnsignedInt.argtypes = [ctypes.c_void_p]
        lib.clang_EvalResult_isUnsignedInt.restype = ctypes.c_uint
        lib.clang_EvalResult_getAsUnsigned.argtypes = [ctypes.c_void_p]
        lib.clang_EvalResult_getAsUnsigned.restype = ctypes.c_ulonglong
        lib.clang_EvalResult_dispose.argtypes = [ctypes.c_void_p]
        _lib = lib
    return _lib


def unary_op(cursor) -> str:
    """The operator of a UNARY_OPERATOR cursor: '-', '!', 'pre++', 'post--', '&', '*', ..."""
    return _UNARY.get(_capi().clang_getCursorUnaryOperatorKind(cursor), "?")


def is_float_constant(cursor) -> bool:
    """Whether clang computes a floating-point value for the expression (a constant expression)."""
    lib = _capi()
    res = lib.clang_Cursor_Evaluate(cursor)
    if not res:
        return False
    try:
        return lib.clang_EvalResult_getKind(res) == 2   # CXEval_Float
    finally:
        lib.clang_EvalResult_dispose(res)


def evaluate_int(cursor) -> int | None:
    """The integer value clang computes for a constant expression, or None."""
    lib = _capi()
    res = lib.clang_Cursor_Evaluate(cursor)
    if not res:
        return None
    try:
        if lib.clang_EvalResult_getKind(res) != 1:   # CXEval_Int
            return None
        if lib.clang_EvalResult_isUnsignedInt(res):
            return int(lib.clang_EvalResult_getAsUnsigned(res))
        return int(lib.clang_EvalResult_getAsLongLong(res))
    finally:
        lib.clang_EvalResult_dispose(res)
