"""A CUDA file that is no translation unit on its own: the build compiles another file that includes
it (`bfs.cu` holds `struct Node { ... };` and then `#include "kernel.cu"`, whose kernel takes a
`Node*`). Where clang, reading the file alone, finds names it does not declare, the file is read
as that includer sees it: the includer's lines before its `#include` come first (and, where the
includer is itself included, its own includer's lines before that). The declarations then come from
the program, as nvcc sees them; the kernels read are the file's own (and those of the files it
includes), never the includer's.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

_QUOTED_INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*"([^"\n]+)"[^\n]*', re.MULTILINE)
_SOURCES = (".cu", ".cuh", ".c", ".cc", ".cpp", ".cxx", ".h", ".hpp", ".inc")
MAX_SCANNED = 300     # files looked at in one folder
MAX_CHAIN = 4         # includers of includers
MAX_CANDIDATES = 2    # includers tried (each one more parse)
# clang's errors that another file's declarations may remove (a type, a name, an array it declares)
FIXABLE = re.compile(r"unknown type name|use of undeclared identifier|unknown template name|"
                     r"no template named|subscripted value is not an array|variable has incomplete type")


@dataclass(frozen=True)
class Includer:
    files: tuple[tuple[str, str], ...]   # (path, the text clang reads there: cut at the chain's include)
    first: str                           # the outermost includer (read before the file's first line)
    where: str                           # 'path:line', the line that includes the file


def _includes(text: str, here: Path, target: Path):
    """The first line of `text` (a file in `here`) that includes `target`, as a match."""
    for m in _QUOTED_INCLUDE.finditer(text):
        try:
            if (here / m.group(1)).resolve() == target:
                return m
        except OSError:
            continue
    return None


def _direct(target: Path, skip: set[Path]) -> list[tuple[Path, str, re.Match]]:
    """Files of the target's folder that include it, sorted by name."""
    out = []
    try:
        names = sorted(p for p in target.parent.iterdir() if p.suffix in _SOURCES and p.is_file())
    except OSError:
        return []
    for p in names[:MAX_SCANNED]:
        rp = p.resolve()
        if rp == target or rp in skip:
            continue
        try:
            text = p.read_text(errors="replace")
        except OSError:
            continue
        if target.name not in text:
            continue
        m = _includes(text, p.parent, target)
        if m:
            out.append((rp, text, m))
    return out


def includers(filename: str) -> list[Includer]:
    """The ways the build may read `filename` as part of another file: each direct includer of its
    folder (at most MAX_CANDIDATES), with the chain of that includer's own first includers."""
    target = Path(filename).resolve()
    out = []
    for path, text, m in _direct(target, set())[:MAX_CANDIDATES]:
        line = text.count("\n", 0, m.start()) + 1
        files = [(str(path), text[:m.start()])]   # the innermost: up to the line including the file
        seen = {target, path}
        outer = path
        for _ in range(MAX_CHAIN - 1):
            up = _direct(outer, seen)
            if not up:
                break
            upath, utext, um = up[0]
            files.insert(0, (str(upath), utext[:um.end()] + "\n"))   # ... through the line including the next
            seen.add(upath)
            outer = upath
        out.append(Includer(tuple(files), files[0][0], f"{os.path.relpath(path)}:{line}"))
    return out


def own_files(tu, filename: str) -> set[str]:
    """The file and those it includes, directly or not (an includer's other files are not the file's)."""
    edges: dict[str, set[str]] = {}
    for inc in tu.get_includes():
        if inc.source is not None and inc.include is not None:
            edges.setdefault(inc.source.name, set()).add(inc.include.name)
    out = {filename}
    todo = [filename]
    while todo:
        for n in edges.get(todo.pop(), ()):
            if n not in out:
                out.add(n)
                todo.append(n)
    return out


def fixable_errors(parsed) -> int:
    """clang's errors in the file itself that an includer's declarations could remove."""
    return sum(1 for p in parsed.placed if p[0] == parsed.filename and FIXABLE.search(p[4]))


def own_errors(parsed) -> int:
    return sum(1 for p in parsed.placed if p[0] == parsed.filename)
