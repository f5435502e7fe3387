"""Inline suppressions: `// kernelrace: ignore[rule, ...]` in the user's own source.

A directive silences the findings one of whose two accesses (or whose barrier) is on its line, or,
when the comment stands alone on its line, on the next line; with no list it silences every rule
there. The lines are the user's: a GLSL shader's line (a finding's origin in the `.comp` file, not
the disassembly's line), a builder's Python line where a finding maps back to one, the file the
user checked otherwise. Emitted sources (TVM's output) are not the user's and are never read.

The comment marker is the file's own: `//` (and `/* */`) in CUDA, Metal, OpenCL, GLSL and WGSL,
`;` in SPIR-V assembly, `#` in Python. `--warn-unused-ignores` lists the directives (and the rules
in them) that silenced nothing in the run.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from analyzer.findings import Finding

@dataclass
class Directive:
    file: str
    line: int                   # where the comment is
    col: int
    applies_to: int             # the line whose findings it silences
    rules: tuple[str, ...] | None   # None: every rule
    used: set[str] = field(default_factory=set)   # the rules it silenced ("*" for a bare one)

    def covers(self, rule: str) -> bool:
        return self.rules is None or rule in self.rules

    def text(self) -> str:
        return "kernelrace: ignore" + (f"[{', '.join(self.rules)}]" if self.rules is not None else "")


def _markers(filename: str) -> tuple[str, ...]:
    suffix = Path(filename).suffix
    if suffix == ".py":
        return ("#",)
    if suffix == ".spvasm":
        return (";",)
    return ("//", "/*")


_DIRECTIVE = re.compile(r"kernelrace:\s*ignore(?:\[([^\]]*)\])?(?![\w\[-])")


def scan(text: str, filename: str) -> list[Directive]:
    """Every directive in a source text. A directive is inside a comment: after the file's
    comment marker on its line (a marker inside a string literal counts too: rare, and harmless,
    since the directive must still name the line)."""
    out = []
    markers = _markers(filename)
    lines = text.splitlines()
    for n, line in enumerate(lines, 1):
        starts = [i for i in (line.find(m) for m in markers) if i >= 0]
        if not starts:
            continue
        start = min(starts)
        m = _DIRECTIVE.search(line, start)
        if m is None:
            continue
        rules = None if m.group(1) is None else tuple(r.strip() for r in m.group(1).split(",") if r.strip())
        alone = not line[:start].strip()
        out.append(Directive(filename, n, m.start() + 1, n + 1 if alone else n, rules))
    return out


def _is_file_we_read(loc_file: str, built: bool) -> bool:
    """A builder's findings point into TVM's emitted source, which is not the user's file; only
    a Python line (a builder's own) is."""
    return not built or loc_file.endswith(".py")


class Inline:
    """The directives of the user's files, read once each, and which of them silenced a finding."""

    def __init__(self, texts: dict[str, str] | None = None, known_rules: tuple[str, ...] = ()):
        self._texts = texts if texts is not None else {}   # not on disk (`check -`): name -> text, filled as read
        self._directives: dict[str, list[Directive]] = {}
        self.known_rules = known_rules

    def directives(self, filename: str) -> list[Directive]:
        if filename not in self._directives:
            text = self._texts.get(filename)
            if text is None and Path(filename).suffix == ".spv":
                text = ""       # a SPIR-V binary has no comments
            if text is None:
                try:
                    text = Path(filename).read_text(encoding="utf-8", errors="replace")
                except OSError:
                    text = ""
            self._directives[filename] = scan(text, filename)
        return self._directives[filename]

    def lines_of(self, f: Finding, built: bool) -> list[tuple[str, int]]:
        """The user's (file, line) of each access of the finding."""
        out = []
        for loc in (f.first, f.second):
            if loc is None:
                continue
            users = loc.users(built) or loc.origin   # a GLSL or builder line (Location.users)
            file, line = (users[0], users[1]) if users is not None else (loc.file, loc.line)
            if _is_file_we_read(file, built) and (file, line) not in out:
                out.append((file, line))
        return out

    def suppresses(self, f: Finding, built: bool) -> bool:
        hit = False
        for file, line in self.lines_of(f, built):
            for d in self.directives(file):
                if d.applies_to == line and d.covers(f.rule):
                    d.used.add("*" if d.rules is None else f.rule)
                    hit = True
        return hit

    def read(self, filename: str) -> None:
        """Scan a file of the run now, so that its directives are listed when none was used."""
        self.directives(filename)

    def unused(self, ran: tuple[str, ...]) -> list[tuple[Directive, str]]:
        """(directive, what is wrong) for each directive, or rule of one, that silenced nothing:
        only rules that ran count (a rule left out by --select/--ignore could not be silenced)."""
        out = []
        for file in sorted(self._directives):
            for d in self._directives[file]:
                if d.rules is None:
                    if not d.used:
                        out.append((d, "silenced nothing"))
                    continue
                for rule in d.rules:
                    if self.known_rules and rule not in self.known_rules:
                        out.append((d, f"unknown rule '{rule}'"))
                    elif rule in ran and rule not in d.used:
                        out.append((d, f"silenced no {rule} finding"))
        return out
