"""The files `kernelrace check` reads: the files named, and the kernel files under the
directories named, as ruff and clang-tidy take a directory.

A directory is walked in sorted order (the report's order does not depend on the file system),
skipping hidden and version-control folders and every path an `exclude` glob of the
configuration matches. Inside a directory only files whose extension names a language kernelrace
reads are taken; the others are listed as skipped (shown with -v). A file named on the command
line is always read, whatever its extension: its language may come from --lang.
"""

from __future__ import annotations

import fnmatch
import os
from pathlib import Path, PurePosixPath

from analyzer.errors import KernelraceError
from analyzer.frontend import EXTENSIONS, lang_of

SKIPPED_DIRS = {"__pycache__", "node_modules", "build", "dist", "site-packages"}


def _excluded(path: Path, root: Path, exclude: list[str]) -> bool:
    """A glob matches the path relative to the directory named, or any single component of it."""
    rel = PurePosixPath(path.relative_to(root).as_posix())
    return any(rel.match(g) or fnmatch.fnmatch(str(rel), g) or any(fnmatch.fnmatch(p, g) for p in rel.parts)
               for g in exclude)


def kernel_files(paths: list[str], exclude: list[str] = (), skipped: list[str] | None = None) -> list[str]:
    """The files to check, in order: each file named, then each directory's kernel files sorted.
    `skipped` collects the files under a directory that are in no known language."""
    out: list[str] = []
    for given in paths:
        p = Path(given)
        if not p.is_dir():
            out.append(given)          # a missing file is reported by the reader, with its name
            continue
        found = []
        for dirpath, dirnames, filenames in os.walk(p):
            d = Path(dirpath)
            dirnames[:] = sorted(n for n in dirnames if not n.startswith(".") and n not in SKIPPED_DIRS
                                 and not _excluded(d / n, p, exclude))
            for name in sorted(filenames):
                f = d / name
                if name.startswith(".") or _excluded(f, p, exclude):
                    continue
                if lang_of(name) is not None:
                    found.append(str(f))
                elif skipped is not None:
                    skipped.append(str(f))
        if not found:
            raise KernelraceError(f"{given}: no kernel files in this directory ({', '.join(EXTENSIONS)})")
        out.extend(found)
    return list(dict.fromkeys(out))

