"""Baselines: today's findings written to a file, so that CI reports only new ones.

A finding is known by its fingerprint (`analyzer.report.sarif.fingerprint`): its rule, kernel and buffer
and the source text of both accesses, hashed. Line numbers, thread numbers, targets and builder parameters are not part of it,
so a finding keeps its fingerprint when code above it moves, and one race found at every point of
a parameter grid is one entry.

File format (JSON, sorted, so that a rewritten baseline diffs cleanly)::

    {"kernelrace-baseline": 1,
     "findings": {"<fingerprint>": {"rule": "...", "kernel": "...", "buffer": "...", "message": "..."}}}
"""

from __future__ import annotations

import json
from pathlib import Path

from analyzer.errors import KernelraceError
from analyzer.findings import Finding, KernelResult
from analyzer.report.sarif import fingerprint

FORMAT_KEY, VERSION = "kernelrace-baseline", 1


def key(finding: Finding) -> str:
    """The finding's fingerprint, the one SARIF output carries (`partialFingerprints`), so that a
    baseline entry and a code-scanning alert name a finding alike."""
    return fingerprint(finding)


def _entry(f: Finding) -> dict[str, str | None]:
    buffer = f.second.buffer or (f.first.buffer if f.first else None)
    return {"rule": f.rule, "kernel": f.kernel, "buffer": buffer, "message": f.message}


def dumps(results: list[KernelResult]) -> tuple[str, int]:
    """The baseline of these results as JSON text, and the number of entries in it."""
    entries: dict[str, dict] = {}
    for r in results:
        for f in r.findings:
            entries.setdefault(key(f), _entry(f))
    data = {FORMAT_KEY: VERSION, "findings": dict(sorted(entries.items()))}
    return json.dumps(data, indent=2, sort_keys=False) + "\n", len(entries)


def check_writable(path: str) -> None:
    """Fail before a long run, not after it, when the baseline cannot be written there."""
    parent = Path(path).parent
    if not parent.is_dir():
        raise KernelraceError(f"{path}: cannot write the baseline: no directory '{parent}'")
    if Path(path).is_dir():
        raise KernelraceError(f"{path}: cannot write the baseline: it is a directory")


def write(path: str, results: list[KernelResult]) -> int:
    text, n = dumps(results)
    try:
        Path(path).write_text(text, encoding="utf-8")
    except OSError as exc:
        raise KernelraceError(f"{path}: cannot write the baseline: {exc.strerror or exc}") from None
    return n


def load(path: str) -> set[str]:
    """The fingerprints a baseline file holds; a missing or corrupt file is a one-line error."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise KernelraceError(f"{path}: no such baseline file (write one with --write-baseline {path})") from None
    except IsADirectoryError:
        raise KernelraceError(f"{path}: cannot read the baseline: it is a directory") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise KernelraceError(f"{path}: cannot read the baseline: {exc}") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise KernelraceError(f"{path}: not a kernelrace baseline: invalid JSON at line {exc.lineno} "
                              f"column {exc.colno}: {exc.msg}") from None
    if not isinstance(data, dict) or FORMAT_KEY not in data or not isinstance(data.get("findings"), dict):
        raise KernelraceError(f"{path}: not a kernelrace baseline: expected an object with "
                              f"\"{FORMAT_KEY}\" and \"findings\"")
    if data[FORMAT_KEY] != VERSION:
        raise KernelraceError(f"{path}: baseline format {data[FORMAT_KEY]!r} is not one this kernelrace "
                              f"reads ({VERSION}); rewrite it with --write-baseline")
    return set(data["findings"])
