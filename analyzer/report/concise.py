"""`--format concise`: one line per finding (`file:line:col: severity[rule] message`, at the user's
own line: a GLSL shader's, a TVM builder's Python line), then the summary line; and `--statistics`:
how many findings each rule reported, as ruff prints them."""

from __future__ import annotations

import json

from analyzer.findings import KernelResult
from analyzer.report import github
from analyzer.report.text import summary


def render(results: list[KernelResult], hidden: dict[str, int] | None = None) -> str:
    lines = []
    for r in results:
        where = ", ".join([r.target] + [f"{k}={v!r}" for k, v in (r.params or {}).items()]) if r.target else ""
        for f in r.findings:
            cond = f"; {f.phrase()}" if f.condition is not None else ""
            kernel = f" (kernel {f.kernel}{' [' + where + ']' if where else ''})" if f.kernel else ""
            # the user's line when the analysed text was generated (a GLSL or builder line)
            site = f.site()
            file, line, col = github.where(f) if site is not None else (f.file, f.second.line, f.second.col)
            lines.append(f"{file}:{line}:{f'{col}:' if col > 0 else ''} {f.severity}[{f.rule}] {f.message}{cond}{kernel}")
    s = summary(results, hidden)
    hidden_text = "".join(f", {s[k]} {label}" for k, label in (("suppressed", "suppressed"),
                                                               ("in_baseline", "in baseline")) if s[k])
    lines.append(f"{s['kernels']} kernel(s), {s['unknown']} unknown: {s['errors']} error(s), {s['warnings']} "
                 f"warning(s), {s['notes']} note(s){hidden_text}")
    return "".join(line + "\n" for line in lines)


def statistics(results: list[KernelResult]) -> list[dict]:
    """[{"rule", "severity", "count"}], the most frequent rule first (then by name)."""
    counts: dict[tuple[str, str], int] = {}
    for r in results:
        for f in r.findings:
            counts[(f.rule, f.severity)] = counts.get((f.rule, f.severity), 0) + 1
    rows = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    return [{"rule": rule, "severity": severity, "count": n} for (rule, severity), n in rows]


def render_statistics(results: list[KernelResult], as_json: bool = False) -> str:
    rows = statistics(results)
    if as_json:
        return json.dumps(rows, indent=2) + "\n"
    width = max((len(str(r["count"])) for r in rows), default=1)
    rule_width = max((len(r["rule"]) for r in rows), default=1)
    return "".join(f"{r['count']:>{width}}\t{r['rule']:<{rule_width}}\t{r['severity']}\n" for r in rows)
