"""Shader-module imports, resolved as the module systems that ship WGSL resolve them, so that a
file is checked as the shader its loader composes.

Three spellings, all read after `#ifdef` preprocessing (an import in a branch not taken is none):
- vello's `#import NAME`: `NAME.wgsl` in the shader folder's `shared/`, the folder itself, or an
  `-I` folder (or its `shared/`);
- naga_oil's `#import a::b`, `#import a::b::{x, y}`, `#import a::b as c`: the file whose
  `#define_import_path a::b` names it, in the shader's folder tree or under an `-I` folder;
- WESL's `import package::a::b;`, `import a::{b, c::d};`: `package::` from the shader's own
  package (a parent folder holding `a/b.wesl`), another package `p::` under an `-I` folder
  (`p/src/a/b.wesl`, `p/a/b.wesl`, `crates/p/src/...`), `super::` from the importing file's parent.
The last segments of a path may name items of the module rather than a module: the longest prefix
that names a module file is taken, and the whole module is included (WGSL's declarations are
order-free, so each module's text is appended after the file's own, once). Qualified uses
(`types::Atmosphere`, `mf::foo()`) become the bare name, padded so that columns stay.

A module not found is one line naming it and where it was looked for, with the -I to pass.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from analyzer.errors import KernelraceError
from analyzer.frontend.wgsl.conditions import apply_conditions, has_conditions

# `#import ...` (naga_oil, vello): rewritten `import ...;` before the preprocessor runs, so that one
# in a branch not taken disappears with it. A naga_oil import may continue over lines inside `{}`.
_HASH_IMPORT = re.compile(r"^[ \t]*#[ \t]*import\b([^\n{]*(?:\{[^}]*\}[^\n]*)?)", re.MULTILINE)
_IMPORT = re.compile(r"(?m)^[ \t]*import\b([^;]*);")
_IMPORT_PATH = re.compile(r"^[ \t]*#[ \t]*define_import_path[ \t]+([\w:]+)", re.MULTILINE)
# `types::Light`, and `constants::4` where `-D` gave a host constant's value.
_QUALIFIED = re.compile(r"\b(?:[A-Za-z_]\w*::)+([A-Za-z_]\w*|[0-9]\w*)")
_EXTS = (".wgsl", ".wesl")
MAX_MODULES = 200          # a module graph larger than this is refused (a runaway import chain)
MAX_INDEXED = 5000         # files read for `#define_import_path` under each folder


@dataclass
class Import:
    segs: tuple[str, ...]      # the full path, items included
    alias: str | None
    line: int                  # where it stands in its file
    text: str                  # as written, on one line


@dataclass
class Composed:
    """The text the parser reads: the file's own lines, then each imported module's."""
    text: str
    origins: list[tuple[str, int]] | None = None     # every line's file and line; None: no module
    modules: dict[str, str] = field(default_factory=dict)   # module file -> its text
    # `import a::b::item as name`: name -> item (the lowering gives the item that name too)
    renamed: dict[str, str] = field(default_factory=dict)


def hash_imports_as_statements(text: str) -> str:
    """`#import a::{b,\\n c}` as `import a::{b, c};` on its first line, its other lines kept empty."""
    def one(m: re.Match) -> str:
        body = m.group(1)
        n = body.count("\n")
        return "import " + " ".join(body.split()) + ";" + "\n" * n
    return _HASH_IMPORT.sub(one, text)


def take_imports(text: str, filename: str, original: str = "") -> tuple[str, list[Import]]:
    """The import statements of preprocessed text, and the text with them blanked (lines kept);
    `original`, the file as written, tells `#import` from `import` for messages."""
    found: list[Import] = []
    written = original.split("\n")

    def one(m: re.Match) -> str:
        line = text.count("\n", 0, m.start()) + 1
        body = " ".join(m.group(1).split())
        hashed = 0 < line <= len(written) and written[line - 1].lstrip().startswith("#")
        for segs, alias in _parse_tree(body, filename, line):
            found.append(Import(segs, alias, line, f"#import {body}" if hashed else f"import {body};"))
        return "\n" * m.group(0).count("\n")
    return _IMPORT.sub(one, text), found


def _parse_tree(body: str, filename: str, line: int) -> list[tuple[tuple[str, ...], str | None]]:
    """`a::b::{c, d::{e as f}}` as the paths it imports: (a, b, c), (a, b, d, e) as f."""
    toks = re.findall(r"::|[{},]|[A-Za-z_]\w*|\S", body)
    pos = 0

    def bad() -> KernelraceError:
        return KernelraceError(f"{filename}:{line}:1: syntax error: import {body}")

    def path(prefix: tuple[str, ...]) -> list:
        nonlocal pos
        segs = list(prefix)
        while True:
            if pos < len(toks) and toks[pos] == "{":
                pos += 1
                out = []
                while pos < len(toks) and toks[pos] != "}":
                    out.extend(path(tuple(segs)))
                    if pos < len(toks) and toks[pos] == ",":
                        pos += 1
                    elif pos < len(toks) and toks[pos] != "}":
                        raise bad()
                if pos >= len(toks):
                    raise bad()
                pos += 1
                return out
            if pos >= len(toks) or not re.fullmatch(r"[A-Za-z_]\w*", toks[pos]):
                raise bad()
            segs.append(toks[pos])
            pos += 1
            if pos < len(toks) and toks[pos] == "::":
                pos += 1
                continue
            alias = None
            if pos + 1 < len(toks) and toks[pos] == "as":
                alias = toks[pos + 1]
                pos += 2
            return [(tuple(segs), alias)]

    out = path(())
    if pos != len(toks):
        raise bad()
    return out


def strip_qualifiers(text: str) -> str:
    """`a::b::name` as `name` followed by as many spaces as the prefix took: columns stay."""
    return _QUALIFIED.sub(lambda m: m.group(1) + " " * (len(m.group(0)) - len(m.group(1))), text)


class Resolver:
    """Finds module files for import paths, from the importing file's place and the -I folders."""

    def __init__(self, include_dirs: tuple[str, ...]):
        self.include_dirs = tuple(include_dirs)
        self._index: dict[str, dict[str, str]] = {}

    def _named(self, root: str) -> dict[str, str]:
        """`#define_import_path` name -> file, for the shader files under `root`."""
        if root not in self._index:
            names: dict[str, str] = {}
            seen = 0
            for dirpath, dirnames, filenames in os.walk(root):
                dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
                for f in sorted(filenames):
                    if not f.endswith(_EXTS):
                        continue
                    seen += 1
                    if seen > MAX_INDEXED:
                        break
                    p = os.path.join(dirpath, f)
                    try:
                        with open(p, encoding="utf-8", errors="replace") as fh:
                            head = fh.read(4096)
                    except OSError:
                        continue
                    m = _IMPORT_PATH.search(head)
                    if m:
                        names.setdefault(m.group(1), p)
                if seen > MAX_INDEXED:
                    break
            self._index[root] = names
        return self._index[root]

    def find(self, segs: tuple[str, ...], importer: str) -> str | None:
        """The module file of the longest prefix of `segs` that names one."""
        here = os.path.dirname(os.path.abspath(importer))
        for k in range(len(segs), 0, -1):
            found = self._module(segs[:k], here)
            if found is not None:
                return found
        return None

    def _module(self, segs: tuple[str, ...], here: str) -> str | None:
        dirs = self.include_dirs
        if len(segs) == 1:   # vello's `#import NAME`
            cands = [os.path.join(here, "shared"), here]
            cands += [x for d in dirs for x in (d, os.path.join(d, "shared"))]
            hit = _first_file(os.path.join(c, segs[0]) for c in cands)
            if hit:
                return hit
        name = "::".join(segs)
        for root in (here,) + dirs:
            hit = self._named(root).get(name)
            if hit:
                return hit
        if segs[0] == "package":
            rest = os.path.join(*segs[1:]) if len(segs) > 1 else None
            d = here
            while rest:
                hit = _first_file([os.path.join(d, rest)])
                if hit:
                    return hit
                parent = os.path.dirname(d)
                if parent == d:
                    break
                d = parent
            return None
        if segs[0] == "super" and len(segs) > 1:
            return _first_file([os.path.join(os.path.dirname(here), *segs[1:])])
        if len(segs) > 1:
            rest = os.path.join(*segs[1:])
            cands = [os.path.join(d, sub, rest) for d in dirs
                     for sub in (os.path.join(segs[0], "src"), segs[0], os.path.join("crates", segs[0], "src"))]
            return _first_file(cands)
        return None


def _first_file(stems) -> str | None:
    for s in stems:
        for ext in _EXTS:
            if os.path.isfile(s + ext):
                return os.path.normpath(s + ext)
    return None


def where_searched(include_dirs: tuple[str, ...]) -> str:
    return ", ".join(include_dirs) or "no -I given"


def not_found(imp: Import, filename: str, include_dirs: tuple[str, ...]) -> KernelraceError:
    module = "::".join(imp.segs)
    return KernelraceError(
        f"{filename}:{imp.line}:1: unsupported construct: {imp.text}: module '{module}' not found "
        f"(searched the shader's folder, its shared/ and parent packages, and -I folders: "
        f"{where_searched(include_dirs)}); pass -I with the folder that holds it")


def read_module(path: str) -> str:
    try:
        return Path(path).read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        raise KernelraceError(f"{path}: cannot read the imported module: {exc.strerror}") from None


def compose(text: str, filename: str, options=None) -> Composed:
    """The file preprocessed (its lines in place), then each module it imports, transitively. Each
    `--include FILE` is a module the shader sees whole, as a host that concatenates sources composes
    it (webgpu-samples' `common.wgsl + shader`): after the file's own lines, since WGSL's module
    scope has no order, so the file's positions stay its own."""
    from dataclasses import replace

    from analyzer.frontend.preprocess import PreprocessOptions, preprocess_wgsl
    options = options or PreprocessOptions()
    forced, options = tuple(options.forced), replace(options, forced=())

    def prepared(src: str, name: str) -> tuple[str, list[Import]]:
        pre = preprocess_wgsl(hash_imports_as_statements(src), name, options)
        if has_conditions(pre):   # WESL's @if/@elif/@else, imports included
            pre = apply_conditions(pre, name, options.macros)
        out, imps = take_imports(pre, name, src)
        return (strip_qualifiers(out) if imps or "::" in out else out), imps

    main, pending = prepared(text, filename)
    if not pending and not forced:
        return Composed(main)
    renamed: dict[str, str] = {}
    resolver = Resolver(options.include_dirs)
    modules: dict[str, str] = {}
    done = {os.path.normpath(os.path.abspath(filename))}
    queue = [(imp, filename) for imp in pending]
    for path in forced:
        key = os.path.normpath(os.path.abspath(path))
        if key not in done:
            done.add(key)
            body, more = prepared(read_module(path), path)
            modules[path] = body
            queue.extend((m, path) for m in more)
    while queue:
        imp, importer = queue.pop(0)
        if imp.alias is not None and imp.alias != imp.segs[-1]:
            renamed[imp.alias] = imp.segs[-1]
        path = resolver.find(imp.segs, importer)
        if path is None:
            raise not_found(imp, importer, options.include_dirs)
        key = os.path.normpath(os.path.abspath(path))
        if key in done:
            continue
        done.add(key)
        if len(modules) >= MAX_MODULES:
            raise KernelraceError(f"{importer}:{imp.line}:1: unsupported construct: more than {MAX_MODULES} "
                                  f"imported modules")
        body, more = prepared(read_module(path), path)
        modules[path] = body
        queue.extend((m, path) for m in more)
    lines = main.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    origins = [(filename, i + 1) for i in range(len(lines))]
    for path, body in modules.items():
        mod_lines = body.split("\n")
        if mod_lines and mod_lines[-1] == "":
            mod_lines.pop()
        lines.extend(mod_lines)
        origins.extend((path, i + 1) for i in range(len(mod_lines)))
    return Composed("\n".join(lines) + "\n", origins, modules, renamed)
