"""SARIF 2.1.0 output: one result per finding, for GitHub code scanning and other SARIF viewers.

Mapping of a finding (see `Finding` in findings.py):

- `locations[0]` is the SECOND access (the one the finding is reported at, as in the text output);
  the FIRST access is `relatedLocations` id 1, and the message links to it (`[...](1)`).
- Both on the user's own line when what was analysed was generated from it (`Finding.site`,
  `Location.users`): a GLSL shader's line (`Location.origin`), a TVM builder's Python line
  (`Location.builder_line`), else for a build the builder's `def` line. The generated text's own
  lines (the SPIR-V disassembly, TVM's emitted source) are then related ids 2 (second) and 3
  (first), and a Vulkan build's generated GLSL ids 4 and 5. Code scanning annotates locations[0].
- Otherwise a location compiled from another source (`Location.origin`: a Vulkan build's generated
  GLSL) gets that original line as a related location (ids 2 and 3), and the `origin` in
  `properties`.
- The witness is written out in the message, kept whole in `properties.witness`, and drawn as a
  `codeFlows` entry with one `threadFlow` per thread of the witness.
- Columns: kernelrace's `Location.col` is Lark's token column, which is 1-based, as SARIF's
  `startColumn` is, so it is used as is (`columnKind` is `unicodeCodePoints`: Lark counts Python
  characters). A column of 0 (glslang's `OpLine` without a column) means "unknown" and is left out.
- URIs: a file under the root (the current directory by default) is a relative URI with
  `uriBaseId` `%SRCROOT%`, which `originalUriBaseIds` defines; a file outside it is an absolute
  `file://` URI. A built kernel's virtual source (`_merge_state_inplace.cu`, `KERNEL.spvasm`) points
  at the file `emit_sources` wrote when `emit` names one, and otherwise stays a bare relative URI
  without a base, with a description saying it was not written.
- `partialFingerprints["kernelrace/v1"]` is `fingerprint(finding)`: rule, kernel, buffer and the
  normalised source text of both accesses, hashed. It does not change when lines move.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import shlex
from pathlib import Path, PurePosixPath
from typing import Any
from urllib.parse import quote

from analyzer.findings import ERROR, NOTE, WARNING, Finding, KernelResult, Location

SARIF_VERSION = "2.1.0"
SARIF_SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
INFORMATION_URI = "https://github.com/kernelrace/kernelrace"
SRCROOT = "%SRCROOT%"
FINGERPRINT_KEY = "kernelrace/v1"
LEVELS = {ERROR: "error", WARNING: "warning", NOTE: "note"}

UNKNOWN_RULE = {
    "id": "unknown",
    "name": "unknown",
    "shortDescription": {"text": "the analysis could not decide whether two accesses race"},
    "fullDescription": {"text": "The solver's budget ran out before it could decide whether a pair of accesses "
                                "of two threads can collide. kernelrace never reports a kernel clean that it did "
                                "not check: the pair is reported as undecided, with the reason."},
    "help": {"text": "Raise the solver's budget per query with --timeout SECONDS (counted in solver work, so "
                     "the verdict is the same on every machine), or simplify the indexing of the two accesses.",
             "markdown": "Raise the solver's budget per query with `--timeout SECONDS` (counted in solver work, "
                         "so the verdict is the same on every machine), or simplify the indexing of the two "
                         "accesses."},
    "defaultConfiguration": {"level": "warning"},
    "properties": {"tags": ["concurrency", "gpu"]},
}


# ----------------------------------------------------------------------------------------------
# fingerprints

def _norm(text: str) -> str:
    return " ".join(text.split())


def _access_text(loc: Location | None) -> str:
    """The source text of an access: the line it was compiled from when there is one (SPIR-V ids
    shift with every edit of the GLSL; the GLSL line does not), else its own line."""
    if loc is None:
        return ""
    return _norm(loc.origin_text or loc.text)


def fingerprint(finding: Finding) -> str:
    """A stable key for a finding: its rule, kernel, buffer and the source text (not the line
    numbers) of both accesses, with the kind of each, hashed. Moving the code up or down, or
    editing other lines, keeps it; changing either access's line changes it. Also the key for
    baselines."""
    buffer = finding.second.buffer or (finding.first.buffer if finding.first else None) or ""
    parts = [
        FINGERPRINT_KEY, finding.rule, finding.kernel, buffer,
        finding.first.kind if finding.first else "", _access_text(finding.first),
        finding.second.kind, _access_text(finding.second),
    ]
    if finding.witness and "second_block" in finding.witness:
        parts.append("between blocks")   # not the same finding as the pair's race within a block
    return hashlib.sha256("\x1f".join(parts).encode()).hexdigest()[:32]


# ----------------------------------------------------------------------------------------------
# emitted sources

_QUOTED = r'"(?:[^"\\]|\\.)*"'
_OPSTRING = re.compile(rf"^\s*(%[\w.]+)\s*=\s*OpString\s+({_QUOTED})", re.MULTILINE | re.DOTALL)
_OPSOURCE = re.compile(rf"^\s*OpSource\s+\w+\s+\d+\s+(%[\w.]+)\s+({_QUOTED})", re.MULTILINE | re.DOTALL)
_OPSOURCE_CONTINUED = re.compile(rf"^\s*OpSourceContinued\s+({_QUOTED})", re.MULTILINE | re.DOTALL)


def _unquote(text: str) -> str:
    return text[1:-1].replace('\\"', '"').replace("\\\\", "\\")


def embedded_sources(spvasm: str) -> dict[str, str]:
    """The source files a SPIR-V module embeds (glslang -g: `OpSource ... %file "text"` and
    `OpSourceContinued`), by file name: the files its `OpLine`s, and so `Location.origin`, name."""
    strings = {m.group(1): _unquote(m.group(2)) for m in _OPSTRING.finditer(spvasm)}
    events = sorted([(m.start(), "source", m) for m in _OPSOURCE.finditer(spvasm)]
                    + [(m.start(), "more", m) for m in _OPSOURCE_CONTINUED.finditer(spvasm)],
                    key=lambda e: e[0])
    out: dict[str, str] = {}
    last = None
    for _, what, m in events:
        if what == "source":
            last = strings.get(m.group(1), m.group(1))
            out[last] = _unquote(m.group(2))
        elif last is not None:
            out[last] += _unquote(m.group(1))
    return out


def built_sources(mod) -> dict[str, str]:
    """The sources `pipeline.check_built` analyses for a `build.BuiltModule`, under the virtual
    file names its findings carry: `FUNCTION.cu` / `FUNCTION.metal`, or for Vulkan each
    `KERNEL.spvasm` and the GLSL `KERNEL.comp` it was compiled from (embedded in the SPIR-V)."""
    out: dict[str, str] = {}
    for name, text in mod.files():
        out[name] = text
        if mod.units:
            for origin, src in embedded_sources(text).items():
                out.setdefault(origin, src)
    return out


def check_sources(results: list[KernelResult]) -> dict[str, str]:
    """For `kernelrace check`: the SPIR-V disassembly of each compiled shader (.comp, .glsl, .spv)
    a result points into (`FILE.spvasm`, which is not on disk), by that virtual file name."""
    from analyzer.frontend import spirv_tools

    out: dict[str, str] = {}
    for name in sorted(_referenced(results)):
        if name.endswith(".spvasm") and not os.path.exists(name):
            base = name[: -len(".spvasm")]
            if Path(base).suffix in (".comp", ".glsl", ".spv") and os.path.isfile(base):
                out[name] = spirv_tools.read_spirv(base)
    return out


def _referenced(results: list[KernelResult]) -> dict[str, tuple[str | None, dict | None]]:
    """Every file name the results point into -> the (target, params) of the first result naming it."""
    out: dict[str, tuple[str | None, dict | None]] = {}
    for r in results:
        names = [r.file]
        for f in r.findings:
            names.append(f.file)
            for loc in (f.first, f.second):
                if loc is not None:
                    names.append(loc.file)
                    if loc.origin:
                        names.append(loc.origin[0])
        for n in names:
            out.setdefault(n, (r.target, r.params))
    return out


_UNSAFE = re.compile(r"[^A-Za-z0-9._=+-]+")


def _slug(target: str | None, params: dict | None) -> str:
    """A directory name for one build: `cuda-num_heads=8-head_dim=256-v_dtype=float16`."""
    raw = "-".join([target or "source"] + [f"{k}={_short(v)}" for k, v in (params or {}).items()])
    slug = _UNSAFE.sub("_", raw).strip("._") or "source"
    if slug != raw or len(slug) > 100:
        digest = hashlib.sha256(json.dumps([target, _jsonable(params)], sort_keys=True).encode()).hexdigest()[:8]
        slug = f"{slug[:80]}-{digest}"
    return slug


def _short(v: Any) -> str:
    return v if isinstance(v, str) else repr(v)


def _safe_relpath(name: str) -> Path:
    """A virtual file name as a relative path that stays inside the emit directory."""
    parts = [p for p in PurePosixPath(name.replace("\\", "/")).parts if p not in ("", ".", "..", "/")]
    parts = [p.replace(":", "_") for p in parts]
    return Path(*parts) if parts else Path("source")


def emit_key(file: str, target: str | None, params: dict | None) -> str:
    """The key `emit_sources` files a build's source under besides its bare name, for runs that
    build several parameter sets or targets: the same virtual name (`_merge_state_inplace.cu`)
    is then a different text per build. It is the path written, relative to the emit directory."""
    return (Path(_slug(target, params)) / _safe_relpath(file)).as_posix() if target else _safe_relpath(file).as_posix()


def _display_path(path: Path) -> str:
    try:
        return os.path.relpath(path)
    except ValueError:   # another drive (Windows)
        return str(path)


def emit_sources(results: list[KernelResult], sources: dict[str, str], emit_dir: str) -> dict[str, str]:
    """Write the emitted sources of built kernels (file name -> text) under emit_dir; return file
    name -> the path written (relative to the current directory when possible).

    Only sources the results point into are written. A built kernel's source goes to
    `EMIT_DIR/TARGET-NAME=VALUE.../NAME` (one directory per build, so that several parameter sets
    or targets do not overwrite each other); a `check` source (a shader's disassembly) to
    `EMIT_DIR/NAME`. The returned dict holds each written file under its bare name and under
    `emit_key(name, target, params)`: merge the dicts of several builds and pass the union to
    `to_sarif(emit=...)`, which looks a location up by its build's key first."""
    refs = _referenced(results)
    out: dict[str, str] = {}
    root = Path(emit_dir)
    for name in sorted(sources):
        if name not in refs:
            continue
        target, params = refs[name]
        key = emit_key(name, target, params)
        path = root / key
        path.parent.mkdir(parents=True, exist_ok=True)
        text = sources[name]
        with open(path, "w", encoding="utf-8", newline="") as fh:
            fh.write(text)
        shown = _display_path(path.absolute())
        out[name] = shown
        out[key] = shown
    return out


# ----------------------------------------------------------------------------------------------
# the log

def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("kernelrace")
    except PackageNotFoundError:   # run from a checkout that was never installed
        return "0"


def _jsonable(v: Any) -> Any:
    """Builder parameters are Python literals: make them JSON (tuples and sets become lists)."""
    if v is None or isinstance(v, (bool, int, str)):
        return v
    if isinstance(v, float):
        return v if math.isfinite(v) else repr(v)
    if isinstance(v, dict):
        return {str(k): _jsonable(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_jsonable(x) for x in v]
    if isinstance(v, (set, frozenset)):
        return sorted((_jsonable(x) for x in v), key=lambda x: json.dumps(x, sort_keys=True))
    return repr(v)


def _esc(text: str) -> str:
    """SARIF message text: literal brackets (and so backslashes) are escaped, since `[text](id)`
    is an embedded link (SARIF 3.11.6)."""
    return text.replace("\\", "\\\\").replace("[", "\\[").replace("]", "\\]")


def _msg(text: str) -> dict:
    return {"text": _esc(text)}


def _level(severity: str) -> str:
    return LEVELS.get(severity, "warning")


def _sections(doc: str) -> dict[str, str]:
    out: dict[str, list[str]] = {}
    current = None
    for line in doc.splitlines():
        if line.startswith("## "):
            current = line[3:].strip()
            out[current] = []
        elif current is not None:
            out[current].append(line)
    return {k: "\n".join(v).strip() for k, v in out.items()}


def _rule_descriptor(rule) -> dict:
    doc = (rule.doc or "").strip()
    what = _sections(doc).get("What it does", "")
    full = " ".join(what.split()) or (doc.splitlines()[0] if doc else rule.summary)
    return {
        "id": rule.name,
        "name": rule.name,
        "shortDescription": {"text": rule.summary},
        "fullDescription": {"text": full},
        "help": {"text": doc or rule.summary, "markdown": doc or rule.summary},
        "defaultConfiguration": {"level": _level(rule.severity)},
        "properties": {"tags": ["concurrency", "gpu"]},
    }


def _descriptors(results: list[KernelResult]) -> list[dict]:
    from rules import RULES

    out = [_rule_descriptor(r) for r in sorted(RULES.values(), key=lambda r: r.name)]
    out.append(json.loads(json.dumps(UNKNOWN_RULE)))   # a copy: callers may edit the log
    known = {d["id"] for d in out}
    for extra in sorted({f.rule for r in results for f in r.findings} - known):
        sev = next(f.severity for r in results for f in r.findings if f.rule == extra)
        out.append({"id": extra, "name": extra, "shortDescription": {"text": extra},
                    "defaultConfiguration": {"level": _level(sev)}})
    return out


def _quote(path: str) -> str:
    return quote(path, safe="/=+,@")


class _Uris:
    """Artifact locations: relative to the root under %SRCROOT%, emitted sources where written."""

    def __init__(self, root: str, emit: dict[str, str]):
        self.root = Path(os.path.abspath(root))
        self.emit = emit

    def base(self) -> dict:
        return {SRCROOT: {"uri": self.root.as_uri().rstrip("/") + "/",
                          "description": {"text": "The directory kernelrace ran in; relative URIs resolve against it."}}}

    def artifact(self, file: str, target: str | None, params: dict | None) -> dict:
        written = self.emit.get(emit_key(file, target, params)) if target else None
        written = written or self.emit.get(file)
        path = written or file
        if written is None and (target or not os.path.exists(path)):
            # a virtual source: a built kernel's emitted code, a shader's disassembly
            what = ("source emitted by TVM" if target else "disassembly" if path.endswith(".spvasm")
                    else "source read from standard input")
            return {"uri": _quote(path.replace("\\", "/")),
                    "description": {"text": f"{what}, not written to disk"}}
        absolute = Path(os.path.abspath(path))
        try:
            rel = absolute.relative_to(self.root)
        except ValueError:
            return {"uri": absolute.as_uri()}
        return {"uri": _quote(rel.as_posix()), "uriBaseId": SRCROOT}


def _physical(loc_file: str, line: int, col: int, text: str, uris: _Uris, target, params) -> dict:
    phys: dict[str, Any] = {"artifactLocation": uris.artifact(loc_file, target, params)}
    if line >= 1:
        region: dict[str, Any] = {"startLine": line}
        if col >= 1:
            region["startColumn"] = col
        phys["region"] = region
        if text:
            phys["contextRegion"] = {"startLine": line, "snippet": {"text": text}}
    return phys


def _line_of(file: str, line: int) -> str:
    import linecache

    return linecache.getline(file, line).rstrip("\r\n")


def _users_text(loc: Location, users: tuple[str, int, int]) -> str:
    """The text of the user's line of an access: the GLSL line the SPIR-V embeds, a builder's line
    as read from its file."""
    return loc.origin_text if users == loc.origin else _line_of(users[0], users[1])


def _what(loc: Location) -> str:
    if loc.kind in ("read", "write"):
        return f"{loc.kind} of {loc.buffer}" + (f" ({loc.memory})" if loc.memory else "")
    if loc.kind == "atomic":
        return f"atomic access of {loc.buffer}" + (f" ({loc.memory})" if loc.memory else "")
    if loc.kind == "condition":
        return "the condition that differs between threads"
    return loc.kind + (f" of {loc.buffer}" if loc.buffer else "")


def _role(loc: Location, role: str) -> str:
    if loc.kind in ("read", "write", "atomic"):
        return f"{role} access: {_what(loc)}"
    return _what(loc)


def _t(v) -> str:
    return "(" + ",".join(str(x) for x in v) + ")" if isinstance(v, (list, tuple)) else str(v)


def _iterations(its: dict | None) -> str:
    if not its:
        return "not in a loop"
    return ", ".join(f"loop at line {k} iteration {v}" for k, v in its.items())


def _witness_text(w: dict | None) -> str:
    if not w:
        return ""
    if "skipping_block" in w:
        return (f"thread {_t(w['reaching_thread'])} of block {_t(w.get('block'))} reaches the grid sync, thread "
                f"{_t(w.get('skipping_thread'))} of block {_t(w['skipping_block'])} does not")
    if "reaching_thread" in w:
        return (f"block {_t(w.get('block'))}: thread {_t(w['reaching_thread'])} reaches the barrier, "
                f"thread {_t(w.get('skipping_thread'))} does not"
                + (f" (both in {_iterations(w['iterations'])})" if w.get("iterations") else ""))
    if "first_thread" not in w:
        return json.dumps(_jsonable(w), sort_keys=True)
    warp = lambda n: f" (warp {n})" if n is not None else ""
    if "second_block" in w:   # two blocks (analyzer/analysis/interblock/grid.py)
        parts = [(f"thread {_t(w['first_thread'])} of block {_t(w['first_block'])} then thread "
                  f"{_t(w.get('second_thread'))} of block {_t(w['second_block'])} (different blocks)")]
    else:
        parts = [(f"block {_t(w.get('block'))}, thread {_t(w['first_thread'])}{warp(w.get('first_warp'))} "
                  f"then thread {_t(w.get('second_thread'))}{warp(w.get('second_warp'))}")]
    if "element" in w:
        parts.append(f"element {w['element']} (byte {w.get('byte_offset')})")
    if w.get("first_iterations") or w.get("second_iterations"):
        parts.append(f"iterations: first {_iterations(w.get('first_iterations'))}; "
                     f"second {_iterations(w.get('second_iterations'))}")
    if w.get("params"):
        parts.append("parameters: " + ", ".join(f"{k}={v}" for k, v in w["params"].items()))
    return ", ".join(parts)


def _build_text(target, params) -> str:
    if not target:
        return ""
    return ", ".join([target] + [f"{k}={v!r}" for k, v in (params or {}).items()])


class _ResultBuilder:
    def __init__(self, uris: _Uris, rule_index: dict[str, int], builder: str | None):
        self.uris = uris
        self.rule_index = rule_index
        self.builder = builder

    def location(self, loc: Location, f: Finding, message: str | None = None, id_: int | None = None,
                 generated: bool = False) -> dict:
        """An access's location: its line in the user's source when it has one (a GLSL line, a
        builder's Python line), else (or with `generated`) its line in the analysed text."""
        out: dict[str, Any] = {}
        if id_ is not None:
            out["id"] = id_
        users = None if generated else loc.users(f.target is not None)
        if users is not None:
            out["physicalLocation"] = _physical(*users, _users_text(loc, users), self.uris, None, None)
        else:
            out["physicalLocation"] = _physical(loc.file, loc.line, loc.col, loc.text, self.uris, f.target, f.params)
        if message:
            out["message"] = _msg(message)
        return out

    def origin(self, loc: Location, f: Finding, role: str, id_: int) -> dict:
        file, line, col = loc.origin
        return {"id": id_,
                "physicalLocation": _physical(file, line, col, loc.origin_text, self.uris, f.target, f.params),
                "message": _msg(f"{role} compiled from {file}:{line}")}

    def _generated(self, f: Finding) -> str:
        return "the source emitted by TVM" if f.target else "the SPIR-V compiled from it"

    def primary(self, f: Finding, site: tuple[str, int, int] | None) -> dict:
        """locations[0]: the user's line (`Finding.site`) when the analysed text was generated,
        else the later access in the analysed file."""
        role = _role(f.second, "second")
        if site is None:
            return self.location(f.second, f, role)
        if site == f.builder_def and f.second.users(True) is None and (f.first is None or f.first.users(True) is None):
            text = f"{role}, in the builder {self.builder or ''} (its line there is not known)".replace("  ", " ")
            return {"physicalLocation": _physical(*site, _line_of(*site[:2]), self.uris, None, None),
                    "message": _msg(text)}
        loc = f.second if f.second.users(f.target is not None) == site else f.first
        return self.location(loc, f, role if loc is f.second else _role(loc, "first"))

    def related(self, f: Finding, site: tuple[str, int, int] | None) -> tuple[list[dict], str | None]:
        """relatedLocations, and the text of the link to id 1 (the first access)."""
        related: list[dict] = []
        link = None
        if f.first is not None:
            first = self.location(f.first, f, _role(f.first, "first"), 1)
            related.append(first)
            link = f"{_role(f.first, 'first')} at line {first['physicalLocation'].get('region', {}).get('startLine', 0)}"
        if site is not None:
            # the analysed (generated) text's own lines, for the reader who wants to see them
            related.append(self.location(f.second, f, f"{_role(f.second, 'second')} in {self._generated(f)}", 2,
                                         generated=True))
            if f.first is not None:
                related.append(self.location(f.first, f, f"{_role(f.first, 'first')} in {self._generated(f)}", 3,
                                             generated=True))
            # a Vulkan build's GLSL (generated too, from the TIR): the lines the SPIR-V came from
            for id_, (loc, role) in enumerate(((f.second, "second"), (f.first, "first")), 4):
                if loc is not None and loc.origin and loc.users(f.target is not None) != loc.origin:
                    related.append(self.origin(loc, f, _role(loc, role), id_))
        else:
            first_origin = f.first.origin if f.first is not None else None
            if f.second.origin and f.second.origin == first_origin:   # one source line, both accesses
                related.append(self.origin(f.second, f, "first and second access", 2))
            else:
                if f.second.origin:
                    related.append(self.origin(f.second, f, _role(f.second, "second"), 2))
                if first_origin:
                    related.append(self.origin(f.first, f, _role(f.first, "first"), 3))
        return related, link

    def result(self, f: Finding) -> dict:
        site = f.site()
        related, link = self.related(f, site)
        links = [link] if link else []
        next_id = max([4] + [r["id"] + 1 for r in related])
        for b in (f.witness or {}).get("barriers", []) or []:
            if not isinstance(b, dict) or not b.get("line"):
                continue
            orders = ", ".join(b.get("orders") or []) or "no memory"
            text = f"barrier {b.get('text', '')} (orders {orders})"
            related.append({"id": next_id,
                            "physicalLocation": _physical(f.file, b["line"], b.get("col", 0), b.get("text", ""),
                                                          self.uris, f.target, f.params),
                            "message": _msg(text)})
            next_id += 1

        text = f.message.rstrip(".") + "."
        if links:
            # the link to the first access: [first access: read of S at line 134](1)
            text_esc = _esc(text) + " " + f"[{_esc(links[0])}](1)."
        else:
            text_esc = _esc(text)
        wtext = _witness_text(f.witness)
        tail = []
        if f.condition is not None:    # the race's condition, as the text output says it
            tail.append(f"{f.phrase()[:1].upper()}{f.phrase()[1:]}.")
        if wtext:
            tail.append(f"Witness: {wtext}.")
        build = _build_text(f.target, f.params)
        tail.append(f"Kernel {f.kernel}" + (f" ({build})" if build else "") + ".")
        tail.extend(n[:1].upper() + n[1:].rstrip(".") + "." for n in f.notes if n)
        message = {"text": text_esc + " " + _esc(" ".join(tail))}

        primary = self.primary(f, site)
        primary["logicalLocations"] = [{"name": f.kernel, "kind": "function"}]
        res: dict[str, Any] = {
            "ruleId": f.rule,
            "ruleIndex": self.rule_index[f.rule],
            "level": _level(f.severity),
            "message": message,
            "locations": [primary],
        }
        if related:
            res["relatedLocations"] = related
        flow = self.code_flow(f)
        if flow:
            res["codeFlows"] = [flow]
        res["partialFingerprints"] = {FINGERPRINT_KEY: fingerprint(f)}
        props: dict[str, Any] = {
            "kernel": f.kernel,
            "file": f.file,
            "target": f.target,
            "params": _jsonable(f.params),
        }
        if f.target and self.builder:
            props["builder"] = self.builder
        props["witness"] = _jsonable(f.witness)
        props["first"] = _loc_props(f.first)
        props["second"] = _loc_props(f.second)
        origins = {role: _loc_props(loc)["origin"] for role, loc in (("first", f.first), ("second", f.second))
                   if loc is not None and loc.origin}
        if origins:
            props["origin"] = origins
        props["notes"] = list(f.notes)
        if f.confirmation is not None:
            props["confirmation"] = _jsonable(f.confirmation)
        if f.condition is not None:
            props["condition"] = f.condition
            props["condition_exact"] = f.condition_kind == "exact"
        res["properties"] = props
        return res

    def flow_location(self, loc: Location, f: Finding, text: str) -> dict:
        return {"location": self.location(loc, f, text), "importance": "essential"}

    def code_flow(self, f: Finding) -> dict | None:
        w = f.witness
        if not w:
            return None
        block = _t(w.get("block"))
        if "reaching_thread" in w:
            reach, skip = _t(w["reaching_thread"]), _t(w.get("skipping_thread"))
            block2 = _t(w["skipping_block"]) if "skipping_block" in w else block   # a grid sync: two blocks
            t1, t2 = [], []
            if f.first is not None:
                t1.append(self.flow_location(f.first, f, f"thread 1 {reach} in block {block}: the condition holds"))
                t2.append(self.flow_location(f.first, f, f"thread 2 {skip} in block {block2}: the condition fails, "
                                                         f"so it skips the barrier"))
            else:
                t2.append(self.flow_location(f.second, f, f"thread 2 {skip} in block {block2} never reaches this barrier"))
            t1.append(self.flow_location(f.second, f, f"thread 1 {reach} in block {block} reaches the barrier"))
            return {"message": _msg(f"Witness: {_witness_text(w)}"),
                    "threadFlows": [self.thread_flow(1, reach, block, None, t1),
                                    self.thread_flow(2, skip, block2, None, t2)]}
        if "first_thread" not in w or f.first is None:
            return None
        elem = f", element {w['element']}" if "element" in w else ""
        flows = []
        for idx, (loc, role) in enumerate(((f.first, "first"), (f.second, "second")), start=1):
            thread = _t(w.get(f"{role}_thread"))
            warp = w.get(f"{role}_warp")
            its = _iterations(w.get(f"{role}_iterations"))
            what = _what(loc)
            own = _t(w[f"{role}_block"]) if "second_block" in w else block   # a race between blocks
            text = (f"thread {idx} {thread} in block {own}" + (f", warp {warp}" if warp is not None else "")
                    + f", {its}: {what}{elem}")
            flows.append(self.thread_flow(idx, thread, own, warp, [self.flow_location(loc, f, text)]))
        return {"message": _msg(f"Witness: {_witness_text(w)}"), "threadFlows": flows}

    @staticmethod
    def thread_flow(idx: int, thread: str, block: str, warp, locations: list[dict]) -> dict:
        state = {"thread": {"text": thread}, "block": {"text": block}}
        if warp is not None:
            state["warp"] = {"text": str(warp)}
        return {"id": f"thread {idx}", "message": _msg(f"thread {idx}: {thread} in block {block}"),
                "initialState": state, "locations": locations}


def _loc_props(loc: Location | None) -> dict | None:
    if loc is None:
        return None
    d = loc.as_dict()
    d["text"] = loc.text
    return _jsonable(d)


def _params_key(params) -> str:
    return json.dumps(_jsonable(params), sort_keys=True)


def _all_findings(results: list[KernelResult]) -> list[Finding]:
    return [f for r in results for f in r.findings]


def _finding_order(f: Finding):
    return (f.target or "", _params_key(f.params), f.file, f.kernel, f.second.line, f.second.col, f.rule,
            f.first.line if f.first else 0, f.first.col if f.first else 0, f.message)


def _invocation(invocation: dict | None) -> dict:
    inv: dict[str, Any] = {"executionSuccessful": True}
    extra: dict[str, Any] = {}
    for key, value in (invocation or {}).items():
        if key == "argv":
            argv = [str(a) for a in value]
            inv["commandLine"] = shlex.join(argv)
            inv["arguments"] = argv[1:]
        elif key == "commandLine":
            inv["commandLine"] = value if isinstance(value, str) else shlex.join(str(a) for a in value)
        elif key == "arguments":
            inv["arguments"] = [str(a) for a in value]
        elif key == "exitCode":
            inv["exitCode"] = int(value)
        elif key == "executionSuccessful":
            inv["executionSuccessful"] = bool(value)
        elif key == "workingDirectory":
            inv["workingDirectory"] = {"uri": Path(os.path.abspath(value)).as_uri()}
        elif key == "builder":
            continue   # per result, see to_sarif
        else:
            extra[key] = _jsonable(value)
    if extra:
        inv["properties"] = dict(sorted(extra.items()))
    return inv


def to_sarif(results: list[KernelResult], *, emit: dict[str, str] | None = None,
             invocation: dict | None = None, root: str | None = None) -> dict:
    """The SARIF 2.1.0 log (a JSON-serialisable dict) for one kernelrace run.

    `emit`: virtual file name -> path written (what `emit_sources` returns; for several builds the
    union of theirs). `invocation`: optional `argv` (list: command line and arguments),
    `commandLine`, `arguments`, `exitCode`, `executionSuccessful` (default true: the analysis ran
    to the end), `workingDirectory`, and `builder` (`MODULE:FUNCTION` of a `lint` run, named in each
    built kernel's result); other keys go to the invocation's properties. `root` (default: the
    current directory) is `%SRCROOT%`, the base of relative URIs."""
    from analyzer.report.text import contracts_in_run, summary

    uris = _Uris(root or os.getcwd(), emit or {})
    rules = _descriptors(results)
    rule_index = {d["id"]: i for i, d in enumerate(rules)}
    builder = (invocation or {}).get("builder")
    rb = _ResultBuilder(uris, rule_index, builder)
    sarif_results = [rb.result(f) for f in sorted(_all_findings(results), key=_finding_order)]

    kernels = [{"kernel": r.kernel, "file": r.file, "target": r.target, "params": _jsonable(r.params),
                "status": r.status, "findings": len(r.findings)}
               | ({"assumptions": list(r.assumptions)} if r.assumptions else {}) for r in results]
    kernels.sort(key=lambda k: (k["target"] or "", _params_key(k["params"]), k["file"], k["kernel"]))
    run_props: dict[str, Any] = {"summary": summary(results), "kernels": kernels}
    if any(r.contracts for r in results):
        run_props["contracts"] = contracts_in_run(results)   # the buffer contracts of the run (docs/contracts.md)
    if builder:
        run_props["builder"] = builder
    run = {
        "tool": {"driver": {
            "name": "kernelrace",
            "informationUri": INFORMATION_URI,
            "version": _version(),
            "rules": rules,
        }},
        "invocations": [_invocation(invocation)],
        "originalUriBaseIds": uris.base(),
        "columnKind": "unicodeCodePoints",
        "results": sarif_results,
        "properties": run_props,
    }
    return {"$schema": SARIF_SCHEMA, "version": SARIF_VERSION, "runs": [run]}


def dumps(log: dict) -> str:
    """The log as text, the same bytes for the same log."""
    return json.dumps(log, indent=2, ensure_ascii=False) + "\n"
