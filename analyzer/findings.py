"""What a check reports: findings with both accesses, a witness, and the run's summary."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

ERROR, WARNING, NOTE = "error", "warning", "note"
SEVERITY_RANK = {NOTE: 0, WARNING: 1, ERROR: 2}
# The rules whose findings are two accesses racing (a fix hint orders them; a run can show them).
RACE_RULES = ("write-after-read", "read-after-write", "write-after-write")


@dataclass
class Location:
    file: str
    line: int
    col: int
    kind: str           # read, write, atomic, barrier
    buffer: str | None = None
    memory: str | None = None
    text: str = ""      # the source line
    origin: tuple[str, int, int] | None = None   # the line of the source it was compiled from
    origin_text: str = ""
    # A built kernel's access: the line of the builder's Python that wrote it (analyzer/tvm/sites.py)
    builder_line: tuple[str, int, int] | None = None

    def as_dict(self) -> dict[str, Any]:
        origin = dict(zip(("file", "line", "col"), self.origin)) | {"text": self.origin_text} if self.origin else None
        return {"file": self.file, "line": self.line, "col": self.col, "kind": self.kind,
                "buffer": self.buffer, "memory": self.memory, "origin": origin} \
            | ({"builder_line": dict(zip(("file", "line", "col"), self.builder_line))} if self.builder_line else {})

    def users(self, built: bool) -> tuple[str, int, int] | None:
        """This access's line in the user's own source, when what was analysed is generated from
        it: a GLSL shader's line (checked by hand; a build's GLSL is generated too), or the
        builder's Python line."""
        if self.builder_line is not None:
            return self.builder_line
        if self.origin is None:
            return None
        if built:
            return self.origin if self.origin[0].endswith(".py") else None
        # A shader checked by hand: the file it names must be the one checked (`X.comp` read as
        # `X.comp.spvasm`, also from standard input) or one on disk, not a name an OpLine of a
        # SPIR-V file from elsewhere carries.
        mine = self.file == self.origin[0] + ".spvasm" or os.path.isfile(self.origin[0])
        return self.origin if mine else None


@dataclass
class Finding:
    rule: str
    severity: str
    message: str
    kernel: str
    file: str
    second: Location                  # primary location: the later access (or the barrier)
    first: Location | None = None     # the earlier access, when there is one
    witness: dict[str, Any] | None = None
    target: str | None = None
    params: dict[str, Any] | None = None
    notes: list[str] = field(default_factory=list)
    fix: dict[str, Any] | None = None   # a fix hint, re-checked (analyzer.analysis.barriers.fixes)
    # `kernelrace confirm`: the finding's race run on concrete inputs (analyzer/command/confirm.py)
    confirmation: dict[str, Any] | None = None
    # A race's condition (analysis/conditions/race_condition.py): on which parameters and launch extents the
    # two accesses collide, over the source's names ("true": every launch), and whether it is exact
    # ("exact") or only sufficient ("sufficient", "witness": the witness's own values).
    condition: str | None = None
    condition_kind: str | None = None
    # The condition as ISL sets (race_freedom.py); not part of the report.
    condition_sets: tuple[str, str] | None = field(default=None, repr=False)
    # A built kernel's finding none of whose accesses maps to a builder line: the builder's `def`
    # line, so that the report still lands in the user's file (analyzer/tvm/sites.py).
    builder_def: tuple[str, int, int] | None = None

    def site(self) -> tuple[str, int, int] | None:
        """Where the finding is in the user's own source when the analysed text was generated
        (SPIR-V from GLSL, a TVM build's emitted source): the later access's line there, else the
        earlier one's, else the builder's `def` line; None when the analysed file is the user's."""
        built = self.target is not None
        for loc in (self.second, self.first):
            if loc is not None and (where := loc.users(built)) is not None:
                return where
        return self.builder_def

    def phrase(self) -> str:
        """The condition as the text output says it, after the message."""
        if self.condition is None:
            return ""
        if self.condition_kind == "exact":
            return "races for every launch" if self.condition == "true" else f"races when {self.condition}"
        return f"races at least when {self.condition}"

    def as_dict(self) -> dict[str, Any]:
        return {
            "rule": self.rule, "severity": self.severity, "message": self.message,
            "kernel": self.kernel, "target": self.target, "params": self.params, "file": self.file,
            "first": self.first.as_dict() if self.first else None,
            "second": self.second.as_dict(), "witness": self.witness, "notes": list(self.notes),
            "fix": self.fix,
        } | ({"confirmation": self.confirmation} if self.confirmation is not None else {}) \
          | ({"condition": self.condition, "condition_exact": self.condition_kind == "exact"}
             if self.condition is not None else {}) \
          | ({"site": dict(zip(("file", "line", "col"), site))} if (site := self.site()) is not None else {})

    def sort_key(self):
        return (self.file, self.kernel, self.second.line, self.second.col, self.rule,
                self.first.line if self.first else 0, self.first.col if self.first else 0)


@dataclass
class KernelResult:
    """One kernel checked: its findings, and whether anything was left undecided."""
    kernel: str
    file: str
    target: str | None
    params: dict[str, Any] | None
    findings: list[Finding]
    seconds: float = 0.0
    queries: int = 0
    # With -v: the pairs of accesses only a stated assumption (in bounds of a declared shape)
    # keeps apart.
    assumed: list[str] = field(default_factory=list)
    # Read from the result cache (analyzer/command/cache.py): `seconds` is then the time the read took.
    cached: bool = False
    # The buffer contracts that apply to the kernel: {"contract", "origin", "in_force"} (false
    # under --no-contracts).
    contracts: list[dict[str, Any]] = field(default_factory=list)
    # Launch extents read from the file's `//--blockDim=X --gridDim=Y` comment, as written there.
    launch_from_file: str = ""
    # Stopped by --kernel-memory: a run with more memory may decide it (never cached).
    stopped: bool = False
    # What the analysis took as given, said by default: launch facts (`blockDim.z = 1, never
    # read`) and the user's assumptions (`--assume`, `// kernelrace: assume`).
    assumptions: list[str] = field(default_factory=list)
    # `check --conditions`: the weakest condition under which the kernel is race-free (race_freedom.py).
    race_free_when: str | None = None

    @property
    def status(self) -> str:
        if any(f.rule == "unknown" for f in self.findings):
            return "unknown"
        # Notes (a redundant barrier) are advice: a kernel with only notes is clean.
        return "findings" if any(f.rule != "unknown" and f.severity != NOTE for f in self.findings) else "clean"
