"""Project configuration: `[tool.kernelrace]` in pyproject.toml, or the top level of kernelrace.toml.

The file is found as ruff finds its own: from the working directory upwards, the first directory
holding a `kernelrace.toml`, or a `pyproject.toml` with a `[tool.kernelrace]` table, wins (in one
directory kernelrace.toml wins over pyproject.toml). The search stops at the repository root (a
directory holding `.git`) or the filesystem root. Every unknown key and every bad value is a
`KernelraceError` naming the file and the key; nothing is silently ignored.
"""

from __future__ import annotations

import difflib
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from analyzer.errors import KernelraceError
from analyzer.findings import SEVERITY_RANK, Finding
from analyzer.tvm.builders import TARGETS

KERNELRACE_TOML, PYPROJECT_TOML = "kernelrace.toml", "pyproject.toml"
SEVERITIES = tuple(sorted(SEVERITY_RANK, key=SEVERITY_RANK.get, reverse=True))   # error, warning, note
LANGS = ("cuda", "metal", "spirv", "wgsl", "opencl")
DEFAULT_TARGETS = ("cuda", "metal")
# Findings the analysis itself reports (a pair it could not decide); not a rule module.
PSEUDO_RULES = ("unknown",)

TOP_KEYS = ("lint", "check", "select", "ignore", "extend-ignore", "severity", "fail-on", "timeout", "strict",
            "suppress", "exclude", "jobs", "cache-dir", "scope", "assume", "kernel-memory")
LINT_KEYS = ("builder", "targets", "params")
CHECK_KEYS = ("block-dim", "grid-dim", "scalar", "define", "lang", "include", "assume")   # define: scalar's old name
SUPPRESS_KEYS = ("rule", "kernel", "buffer", "reason")
ASSUME_KEYS = ("buffer", "kernel", "property", "reason")


@dataclass
class LintEntry:
    builder: str
    targets: list[str]
    params: dict[str, list[Any]]


@dataclass
class CheckDefaults:
    block_dim: tuple[int, ...] | None = None
    grid_dim: tuple[int, ...] | None = None
    define: dict[str, int] = field(default_factory=dict)
    lang: str | None = None
    include: list[str] = field(default_factory=list)   # -I directories
    assume: list = field(default_factory=list)    # assumptions and buffer contracts (`assume = [...]`)


@dataclass
class Suppression:
    rule: str | None
    kernel: str | None
    buffer: str | None
    reason: str

    def matches(self, f: Finding) -> bool:
        buffers = {loc.buffer for loc in (f.first, f.second) if loc is not None}
        return ((self.rule is None or f.rule == self.rule)
                and (self.kernel is None or f.kernel == self.kernel)
                and (self.buffer is None or self.buffer in buffers))


@dataclass
class Config:
    path: Path | None = None          # the file it came from; None when there is none
    lint: list[LintEntry] = field(default_factory=list)
    check: CheckDefaults = field(default_factory=CheckDefaults)
    select: tuple[str, ...] | None = None
    ignore: tuple[str, ...] | None = None          # rules not run (--ignore replaces it)
    extend_ignore: tuple[str, ...] = ()            # more rules not run (--extend-ignore adds to it)
    severity: dict[str, str] = field(default_factory=dict)
    fail_on: str | None = None
    timeout: float | None = None
    strict: bool | None = None
    suppress: list[Suppression] = field(default_factory=list)
    exclude: list[str] = field(default_factory=list)   # globs `check DIR` skips
    jobs: int | None = None
    kernel_memory: int | None = None   # MB per kernel (--kernel-memory)
    cache_dir: str | None = None   # the result cache (analyzer/command/cache.py), relative to the file
    scope: str | None = None          # "block", "grid" or "all" (--scope)
    assume: list = field(default_factory=list)   # buffer contracts (analysis/stated/contracts.py)
    warnings: list[str] = field(default_factory=list)   # deprecated keys: the CLI prints them

    @property
    def root(self) -> Path | None:
        """The directory of the configuration file: builder modules are imported from it."""
        return self.path.parent if self.path else None


# --- finding and reading the file -----------------------------------------------------------------

def _toml():
    try:
        import tomllib
        return tomllib
    except ModuleNotFoundError:
        pass
    try:
        import tomli
        return tomli
    except ModuleNotFoundError:
        return None


def shown(path: Path) -> str:
    """The path as the user would write it: relative to the working directory when it is below it."""
    try:
        rel = os.path.relpath(path)
    except ValueError:   # another drive
        return str(path)
    return rel if not rel.startswith(os.pardir + os.sep + os.pardir) else str(path)


def _read(path: Path) -> dict[str, Any]:
    toml = _toml()
    if toml is None:
        raise KernelraceError(f"{shown(path)}: reading TOML needs Python 3.11 or the 'tomli' package "
                              f"(python -m pip install tomli)")
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise KernelraceError(f"{shown(path)}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise KernelraceError(f"{shown(path)}: cannot read: {exc}") from None
    try:
        return toml.loads(text)
    except toml.TOMLDecodeError as exc:
        raise KernelraceError(f"{shown(path)}: invalid TOML: {exc}") from None


def _mentions_us(path: Path) -> bool:
    """A cheap look before parsing: a pyproject.toml without our table is not ours (and needs no
    TOML parser on Python 3.10)."""
    try:
        return "tool.kernelrace" in path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False


def find(start: Path | None = None) -> Path | None:
    """The configuration file that applies in `start` (default: the working directory), or None."""
    here = (start or Path.cwd()).resolve()
    for d in (here, *here.parents):
        own = d / KERNELRACE_TOML
        if own.is_file():
            return own
        py = d / PYPROJECT_TOML
        if py.is_file() and _mentions_us(py):
            data = _read(py)
            if isinstance(data.get("tool"), dict) and "kernelrace" in data["tool"]:
                return py
        if (d / ".git").exists():    # the repository root: look no further
            return None
    return None


def load(path: Path | str) -> Config:
    """Read and validate one configuration file (pyproject.toml: its [tool.kernelrace] table)."""
    path = Path(path)
    data = _read(path)
    name = shown(path)
    if path.name == PYPROJECT_TOML:
        table = data.get("tool", {}).get("kernelrace") if isinstance(data.get("tool"), dict) else None
        if table is None:
            raise KernelraceError(f"{name}: no [tool.kernelrace] table")
        prefix = "tool.kernelrace"
    else:
        table, prefix = data, ""
    cfg = _Validator(name, prefix).config(table)
    cfg.path = path.resolve()
    if cfg.cache_dir is not None:   # relative to the configuration, as builders are
        cfg.cache_dir = str(cfg.path.parent / Path(cfg.cache_dir).expanduser())
    return cfg


def discover(start: Path | None = None) -> Config:
    """The configuration in force in `start`: an empty Config when there is no file."""
    path = find(start)
    return load(path) if path else Config()


# --- validation ---------------------------------------------------------------------------------

class _Validator:
    def __init__(self, shown: str, prefix: str):
        self.shown, self.prefix = shown, prefix

    def table(self, sub: str = "", array: bool = False) -> str:
        name = ".".join(p for p in (self.prefix, sub) if p)
        if not name:
            return ""     # the top level of kernelrace.toml
        return f"[[{name}]]" if array else f"[{name}]"

    def fail(self, where: str, what: str):
        raise KernelraceError(f"{self.shown}: {where} {what}" if where else f"{self.shown}: {what}")

    def keys(self, data: dict, known: tuple[str, ...], where: str) -> None:
        for key in data:
            if key not in known:
                close = difflib.get_close_matches(key, known, n=1)
                hint = f" (did you mean '{close[0]}'?)" if close else f" (known: {', '.join(known)})"
                self.fail(where, f"unknown key '{key}'{hint}")

    def config(self, data: Any) -> Config:
        where = self.table()
        if not isinstance(data, dict):
            self.fail(where, "must be a table")
        self.keys(data, TOP_KEYS, where)
        cfg = Config()
        if "select" in data:
            cfg.select = tuple(self.rules(data["select"], where, "select"))
        if "ignore" in data:
            cfg.ignore = tuple(self.rules(data["ignore"], where, "ignore"))
        if "extend-ignore" in data:
            cfg.extend_ignore = tuple(self.rules(data["extend-ignore"], where, "extend-ignore"))
        if "severity" in data:
            cfg.severity = self.severity(data["severity"], where)
        if "fail-on" in data:
            cfg.fail_on = self.choice(data["fail-on"], SEVERITIES, where, "fail-on")
        if "timeout" in data:
            t = data["timeout"]
            if isinstance(t, bool) or not isinstance(t, (int, float)) or not t > 0:
                self.fail(where, f"timeout: expected a positive number of seconds, got {t!r}")
            cfg.timeout = float(t)
        if "strict" in data:
            if not isinstance(data["strict"], bool):
                self.fail(where, f"strict: expected true or false, got {data['strict']!r}")
            cfg.strict = data["strict"]
        if "exclude" in data:
            ex = data["exclude"]
            if not isinstance(ex, list) or not all(isinstance(g, str) and g for g in ex):
                self.fail(where, f"exclude: expected a list of glob patterns, got {ex!r}")
            cfg.exclude = list(ex)
        if "jobs" in data:
            j = data["jobs"]
            if isinstance(j, bool) or not isinstance(j, int) or j < 1:
                self.fail(where, f"jobs: expected a positive number of worker processes, got {j!r}")
            cfg.jobs = j
        if "kernel-memory" in data:
            m = data["kernel-memory"]
            if isinstance(m, bool) or not isinstance(m, int) or m < 1:
                self.fail(where, f"kernel-memory: expected a positive number of megabytes, got {m!r}")
            cfg.kernel_memory = m
        if "cache-dir" in data:
            d = data["cache-dir"]
            if not isinstance(d, str) or not d.strip():
                self.fail(where, f"cache-dir: expected a directory path, got {d!r}")
            cfg.cache_dir = d
        if "scope" in data:
            cfg.scope = self.choice(data["scope"], ("block", "grid", "all"), where, "scope")
        if "lint" in data:
            cfg.lint = [self.lint(e, i) for i, e in enumerate(self.array(data["lint"], where, "lint"), 1)]
        if "check" in data:
            cfg.check = self.check(data["check"], cfg.warnings)
        if "suppress" in data:
            cfg.suppress = [self.suppression(e, i)
                            for i, e in enumerate(self.array(data["suppress"], where, "suppress"), 1)]
        if "assume" in data:
            cfg.assume = [self.contract(e, i) for i, e in enumerate(self.array(data["assume"], where, "assume"), 1)]
        return cfg

    def contract(self, data: dict, i: int):
        """One [[assume]] table: buffer, property, optional kernel and reason."""
        from analyzer.analysis.stated.contracts import parse

        where = f"{self.table('assume', array=True)} entry {i}"
        self.keys(data, ASSUME_KEYS, where)
        for k in ASSUME_KEYS:
            if k in data and not (isinstance(data[k], str) and data[k].strip()):
                self.fail(where, f"{k}: expected a non-empty string, got {data[k]!r}")
        for k in ("buffer", "property"):
            if k not in data:
                self.fail(where, f"has no {k} (buffer = \"NAME\", property = \"nondecreasing\" | \"distinct\" | "
                                 f"\"distinct-except(V)\" | \"distinct-across(INDPTR)\" | \"range=LO..HI\")")
        text = f"{data['kernel'] + '/' if 'kernel' in data else ''}{data['buffer']}:{data['property']}"
        try:
            return parse(text, f"{self.shown} {where}")
        except ValueError as exc:
            self.fail(where, str(exc))

    def array(self, value: Any, where: str, key: str) -> list[dict]:
        if not isinstance(value, list) or not all(isinstance(e, dict) for e in value):
            self.fail(where, f"{key}: expected an array of tables ([[{'.'.join(p for p in (self.prefix, key) if p)}]])")
        return value

    def choice(self, value: Any, choices: tuple[str, ...], where: str, key: str) -> str:
        if value not in choices:
            self.fail(where, f"{key}: expected one of {', '.join(repr(c) for c in choices)}, got {value!r}")
        return value

    def known_rules(self, pseudo: bool = True) -> tuple[str, ...]:
        from rules import RULES
        return tuple(RULES) + (PSEUDO_RULES if pseudo else ())

    def rules(self, value: Any, where: str, key: str) -> list[str]:
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            self.fail(where, f"{key}: expected a list of rule names, got {value!r}")
        for r in value:
            self.rule(r, where, key, pseudo=False)   # undecided pairs are always reported
        return list(value)

    def rule(self, name: str, where: str, key: str, pseudo: bool = True) -> str:
        known = self.known_rules(pseudo)
        if name not in known:
            self.fail(where, f"{key}: unknown rule '{name}' (known: {', '.join(known)})")
        return name

    def severity(self, value: Any, where: str) -> dict[str, str]:
        if not isinstance(value, dict):
            self.fail(where, f"severity: expected a table of rule = \"error\" | \"warning\" | \"note\", got {value!r}")
        for rule, level in value.items():
            self.rule(rule, where, "severity")
            self.choice(level, SEVERITIES, where, f"severity.{rule}")
        return dict(value)

    def lint(self, data: dict, i: int) -> LintEntry:
        where = f"{self.table('lint', array=True)} entry {i}"
        self.keys(data, LINT_KEYS, where)
        builder = data.get("builder")
        if not isinstance(builder, str) or ":" not in builder:
            self.fail(where, f"builder: expected \"module:function\", got {builder!r}")
        where = f"{where} ({builder})"
        targets = data.get("targets", list(DEFAULT_TARGETS))
        if not isinstance(targets, list) or not targets or not all(isinstance(t, str) for t in targets):
            self.fail(where, f"targets: expected a non-empty list of {', '.join(TARGETS)}, got {targets!r}")
        for t in targets:
            self.choice(t, TARGETS, where, "targets")
        params = data.get("params", {})
        if not isinstance(params, dict):
            self.fail(where, f"params: expected a table of name = value or [values], got {params!r}")
        grid: dict[str, list[Any]] = {}
        for name, v in params.items():
            if not name.isidentifier():
                self.fail(where, f"params: '{name}' is not a Python parameter name")
            if isinstance(v, list) and not v:
                self.fail(where, f"params.{name}: an empty list builds nothing")
            grid[name] = list(v) if isinstance(v, list) else [v]
        return LintEntry(builder, list(dict.fromkeys(targets)), grid)

    def dims(self, value: Any, where: str, key: str) -> tuple[int, ...]:
        dims = [value] if isinstance(value, int) else value
        if (not isinstance(dims, list) or not 1 <= len(dims) <= 3
                or not all(isinstance(d, int) and not isinstance(d, bool) and d >= 1 for d in dims)):
            self.fail(where, f"{key}: expected a positive integer or a list of 1 to 3 of them, got {value!r}")
        return tuple(dims)

    def check(self, data: Any, warnings: list[str]) -> CheckDefaults:
        where = self.table("check")
        if not isinstance(data, dict):
            self.fail(self.table(), f"check: expected a table, got {data!r}")
        self.keys(data, CHECK_KEYS, where)
        out = CheckDefaults()
        if "block-dim" in data:
            out.block_dim = self.dims(data["block-dim"], where, "block-dim")
        if "grid-dim" in data:
            out.grid_dim = self.dims(data["grid-dim"], where, "grid-dim")
        if "scalar" in data and "define" in data:
            self.fail(where, "scalar and define: give the scalar parameters once, as scalar (define is its old name)")
        for key in ("scalar", "define"):
            if key not in data:
                continue
            if key == "define":
                warnings.append(f"{self.shown}: {where} define is deprecated: call it scalar (the scalar kernel "
                                f"parameters' values; -D defines a preprocessor macro)")
            d = data[key]
            if not isinstance(d, dict):
                self.fail(where, f"{key}: expected a table of name = integer, got {d!r}")
            for name, v in d.items():
                if not name.isidentifier() or not isinstance(v, int) or isinstance(v, bool):
                    self.fail(where, f"{key}.{name}: expected an integer, got {v!r}")
            out.define = dict(d)
        if "lang" in data:
            out.lang = self.choice(data["lang"], LANGS, where, "lang")
        if "include" in data:
            inc = data["include"]
            if not isinstance(inc, list) or not all(isinstance(d, str) for d in inc):
                self.fail(where, f"include: expected a list of directories, got {inc!r}")
            out.include = list(inc)
        if "assume" in data:
            # Launch and parameter facts (`H >= blockDim.y`) or buffer contracts, told apart by form.
            from analyzer.analysis.stated import assumptions
            from analyzer.analysis.stated import contracts

            said = data["assume"]
            if not isinstance(said, list) or not all(isinstance(a, str) for a in said):
                self.fail(where, f"assume: expected a list of strings, got {said!r}")
            for a in said:
                try:
                    out.assume.append(assumptions.parse(a, f"{self.shown} {where}")
                                      if assumptions.looks_like_expression(a) else contracts.parse(a, f"{self.shown} {where}"))
                except ValueError as exc:
                    self.fail(where, f"assume: {exc}")
        return out

    def suppression(self, data: dict, i: int) -> Suppression:
        fields = ", ".join(f"{k} = {data[k]!r}" for k in ("rule", "kernel", "buffer") if k in data)
        where = f"{self.table('suppress', array=True)} entry {i}" + (f" ({fields})" if fields else "")
        self.keys(data, SUPPRESS_KEYS, where)
        for k in SUPPRESS_KEYS:
            if k in data and not isinstance(data[k], str):
                self.fail(where, f"{k}: expected a string, got {data[k]!r}")
        if "rule" in data:
            self.rule(data["rule"], where, "rule")
        if not any(data.get(k) for k in ("rule", "kernel", "buffer")):
            self.fail(where, "names no rule, kernel or buffer: it would suppress everything")
        if not data.get("reason", "").strip():
            self.fail(where, "has no reason: say why the finding is not a bug (reason = \"...\")")
        return Suppression(data.get("rule") or None, data.get("kernel") or None,
                           data.get("buffer") or None, data["reason"].strip())
