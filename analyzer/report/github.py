"""`--format github`: one GitHub Actions workflow command per finding, which the runner turns into
an annotation on the file and line of the pull request's diff.

The annotation goes on the user's own line: a GLSL shader's line rather than its disassembly's, a
TVM builder's Python line (its `def` line when the access's own is not known) rather than TVM's
emitted source. Severities map to `error`, `warning`
and `notice`. Values are escaped as the runner unescapes them (`%`, CR and LF everywhere, and `:`
and `,` in properties).
"""

from __future__ import annotations

import os

from analyzer.findings import Finding, KernelResult

LEVEL = {"error": "error", "warning": "warning", "note": "notice"}


def _data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _prop(text: str) -> str:
    return _data(text).replace(":", "%3A").replace(",", "%2C")


def shown_path(path: str) -> str:
    """A path as the runner wants it: relative to the working directory (the repository's root in
    a workflow) when it is under it."""
    if os.path.isabs(path):
        rel = os.path.relpath(path)
        if not rel.startswith(".."):
            return rel
    return path


def where(f: Finding, emitted: dict[str, str] | None = None) -> tuple[str, int, int]:
    """(file, line, col) of the finding in the user's source (`Finding.site`: a GLSL shader's
    line, a builder's Python line, else the builder's `def` line), else its own place (a build's
    emitted source without a builder to name: where --emit-dir wrote it). col 0: unknown."""
    site = f.site()
    if site is not None:
        return shown_path(site[0]), site[1], site[2]
    loc = f.second
    return shown_path((emitted or {}).get(loc.file, loc.file)), loc.line, loc.col


def annotation(f: Finding, emitted: dict[str, str] | None = None) -> str:
    file, line, col = where(f, emitted)
    props = [f"file={_prop(file)}", f"line={line}"] + ([f"col={col}"] if col > 0 else [])
    props.append(f"title={_prop(f'kernelrace ({f.rule})')}")
    where_built = ", ".join([f.target] + [f"{k}={v!r}" for k, v in (f.params or {}).items()]) if f.target else ""
    cond = f"; {f.phrase()}" if f.condition is not None else ""
    message = f"{f.message}{cond} (kernel {f.kernel}{' [' + where_built + ']' if where_built else ''})"
    if f.fix:
        message += f"\nfix: {f.fix['text']}"
    return f"::{LEVEL.get(f.severity, 'error')} {','.join(props)}::{_data(message)}"


def render(results: list[KernelResult], emitted: dict[str, str] | None = None) -> str:
    return "".join(annotation(f, emitted) + "\n" for r in results for f in r.findings)
