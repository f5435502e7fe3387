"""Reporters: they read findings only. Text (rich) and JSON."""

from __future__ import annotations

import json
import os
import sys
from typing import Any

from rich.console import Console
from rich.markup import escape

from analyzer.findings import ERROR, KernelResult
from analyzer.report import github

STYLE = {"error": "bold red", "warning": "yellow", "note": "cyan"}


def summary(results: list[KernelResult], hidden: dict[str, int] | None = None,
            shard: dict[str, Any] | None = None) -> dict[str, Any]:
    """The run's counts. `hidden`: findings not reported, by why ("in_baseline", "suppressed").
    `shard` (--shard K/N): index, count, and the units this shard ran of the whole run's."""
    findings = [f for r in results for f in r.findings]
    by_rule: dict[str, int] = {}
    for f in findings:
        by_rule[f.rule] = by_rule.get(f.rule, 0) + 1
    return {
        "kernels": len(results),
        "clean": sum(r.status == "clean" for r in results),
        "with_findings": sum(r.status == "findings" for r in results),
        "unknown": sum(r.status == "unknown" for r in results),
        "errors": sum(f.severity == ERROR for f in findings),
        "warnings": sum(f.severity == "warning" for f in findings),
        "notes": sum(f.severity == "note" for f in findings),
        # Findings whose witness did not replay on concrete values (see analyzer/analysis/witness/replay.py).
        "unreplayed": sum(bool(f.witness) and f.witness.get("replayed") is False for f in findings),
        "by_rule": dict(sorted(by_rule.items())),
        "in_baseline": (hidden or {}).get("in_baseline", 0),
        "suppressed": (hidden or {}).get("suppressed", 0),
    } | ({"shard": dict(shard)} if shard else {})


def to_json(results: list[KernelResult], hidden: dict[str, int] | None = None, verbose: bool = False,
            extra: dict[str, Any] | None = None, shard: dict[str, Any] | None = None) -> str:
    """The report as JSON; `extra` adds top-level keys (`kernelrace llm`: its table under "llm")."""
    findings = [f.as_dict() for r in results for f in r.findings]
    kernels = [{"kernel": r.kernel, "file": r.file, "target": r.target, "params": r.params,
                "status": r.status, "findings": len(r.findings)}
               | ({"launch_from_file": r.launch_from_file} if r.launch_from_file else {})
               | ({"contracts": list(r.contracts)} if r.contracts else {})
               | ({"assumptions": list(r.assumptions)} if r.assumptions else {})
               | ({"race_free_when": r.race_free_when} if r.race_free_when else {})
               | ({"seconds": round(r.seconds, 4), "queries": r.queries, "assumed": list(r.assumed), "cached": r.cached}
                  if verbose else {})
               for r in results]
    return json.dumps({"findings": findings, "kernels": kernels, "summary": summary(results, hidden, shard)}
                      | ({"contracts": contracts_in_run(results)} if any(r.contracts for r in results) else {})
                      | (extra or {}), indent=2)


def contracts_in_run(results: list[KernelResult]) -> list[dict[str, Any]]:
    """Every buffer contract that applied to a kernel of the run, once, with the kernels it applied to."""
    out: dict[tuple, dict[str, Any]] = {}
    for r in results:
        for c in r.contracts:
            entry = out.setdefault((c["contract"], c["origin"], c["in_force"]), dict(c, kernels=[]))
            if r.kernel not in entry["kernels"]:
                entry["kernels"].append(r.kernel)
    return sorted(out.values(), key=lambda e: (e["contract"], e["origin"]))


def _thread(t: list[int]) -> str:
    return "(" + ",".join(str(v) for v in t) + ")"


def _short_path(path: str) -> str:
    """A builder's file as the reader finds it: relative to the working directory when under it,
    else relative to the import path it was imported from (`tvm/relax/.../_decode_kernels.py`)."""
    shown = github.shown_path(path)
    if not os.path.isabs(shown):
        return shown
    roots = [r for r in map(os.path.abspath, filter(None, sys.path)) if shown.startswith(r.rstrip(os.sep) + os.sep)]
    return os.path.relpath(shown, max(roots, key=len)) if roots else shown


def _where(r: KernelResult) -> str:
    shown = ", ".join([r.target] + [f"{k}={v!r}" for k, v in (r.params or {}).items()]) if r.target else ""
    return f" [{shown}]" if shown else ""


def print_text(results: list[KernelResult], console: Console, *, quiet: bool = False, verbose: bool = False,
               hidden: dict[str, int] | None = None, llm: dict[str, Any] | None = None,
               shard: dict[str, Any] | None = None) -> None:
    """The report: every finding, then (verbose) one line per kernel, then (`llm`: the table of
    `kernelrace llm`, see `llm_table`) the summary table, then the summary line.
    `quiet`: the summary line only. Colour only when the console is a terminal."""
    announced: set[str] = set()
    for r in ([] if quiet else results):
        where = _where(r)
        if r.launch_from_file and r.file not in announced:
            announced.add(r.file)
            console.print(f"[dim]{escape(r.file)}: launch extents from the file's comment: "
                          f"{escape(r.launch_from_file)}[/]")
        if r.assumptions and (r.findings or verbose):
            console.print(f"[dim]{escape(r.file)}: kernel {escape(r.kernel)}: assumed: "
                          f"{escape('; '.join(r.assumptions))}[/]")
        for f in r.findings:
            sev = STYLE.get(f.severity, "")
            loc = f"{f.file}:{f.second.line}:{f.second.col}"
            if f.target is None and (site := f.site()) is not None:   # a shader's GLSL line, not its SPIR-V's
                loc = f"{site[0]}:{site[1]}" + (f":{site[2]}" if site[2] else "")
            cond = f"; {f.phrase()}" if f.condition is not None else ""
            kernel = f"  [dim]kernel {escape(f.kernel)}{escape(where)}[/]" if f.kernel else ""
            console.print(f"[bold]{escape(loc)}[/]: [{sev}]{f.severity}[/]{escape('[' + f.rule + ']')} "
                          f"{escape(f.message + cond)}{kernel}")
            if f.second.kind == "file":   # a file or build not analysed: its reason is the message
                continue
            rows = []
            if f.first is not None:
                rows.append((f.first, "first: "))
            rows.append((f.second, "second: " if f.first is not None else ""))
            for i, (loc_, role) in enumerate(rows):
                what = loc_.kind + (f" {loc_.buffer} ({loc_.memory})" if loc_.buffer else "")
                if i == 0 or loc_.line != rows[i - 1][0].line:   # a line shown once for both
                    console.print(f"  [dim]{loc_.line:>5} |[/] {escape(loc_.text[:140])}")
                origin = f" (from {loc_.origin[0]}:{loc_.origin[1]})" if loc_.origin else ""
                if loc_.builder_line:   # a TVM build: the builder's own Python line
                    origin += f" (builder {_short_path(loc_.builder_line[0])}:{loc_.builder_line[1]})"
                console.print(f"  [dim]      |[/] [cyan]{role}{escape(what)} at {loc_.line}:{loc_.col}{escape(origin)}[/]")
                if loc_.origin_text and (i == 0 or rows[i - 1][0].origin != loc_.origin):
                    console.print(f"  [dim]{loc_.origin[1]:>5} |[/] {escape(loc_.origin_text[:140])}  [dim]({escape(loc_.origin[0])})[/]")
            w = f.witness
            if w and "skipping_block" in w:
                # A grid sync some blocks skip: two blocks.
                console.print(f"  witness: thread {_thread(w['reaching_thread'])} of block {_thread(w['block'])} "
                              f"reaches the grid sync, thread {_thread(w['skipping_thread'])} of block "
                              f"{_thread(w['skipping_block'])} does not")
            elif w and "reaching_thread" in w:
                console.print(f"  witness: block {_thread(w['block'])}, thread {_thread(w['reaching_thread'])} "
                              f"reaches the barrier, thread {_thread(w['skipping_thread'])} does not")
                if w.get("iterations"):
                    console.print("  iterations: both in " + ", ".join(f"loop@{k} iteration {v}"
                                                                   for k, v in w["iterations"].items()))
            elif w and "second_block" in w:
                # Two blocks (a race between blocks, analyzer/analysis/interblock/grid.py).
                console.print(
                    f"  witness: thread {_thread(w['first_thread'])} of block {_thread(w['first_block'])} "
                    f"then thread {_thread(w['second_thread'])} of block {_thread(w['second_block'])} "
                    f"(different blocks), element {w['element']} (byte {w['byte_offset']})")
            elif w:
                blk = _thread(w["block"])
                warp = lambda n: f" (warp {n})" if n is not None else ""  # noqa: E731
                console.print(
                    f"  witness: block {blk}, thread {_thread(w['first_thread'])}{warp(w['first_warp'])} "
                    f"then thread {_thread(w['second_thread'])}{warp(w['second_warp'])}, "
                    f"element {w['element']} (byte {w['byte_offset']})")
                iters = []
                for label, key in (("first", "first_iterations"), ("second", "second_iterations")):
                    if w[key]:
                        iters.append(f"{label} in " + ", ".join(f"loop@{k} iteration {v}" for k, v in w[key].items()))
                if iters:
                    console.print("  iterations: " + "; ".join(iters))
            if w and (w.get("params") or w.get("launch")) and "reaching_thread" not in w:
                said = [", ".join(f"{k}={v}" for k, v in w.get("params", {}).items()),
                        ", ".join(f"{k}={v}" for k, v in w.get("launch", {}).items())]
                console.print("  parameters: " + "; launch: ".join(x for x in said if x)
                              if said[0] else "  launch: " + said[1])
            for note in f.notes:
                console.print(f"  [dim]note: {escape(note)}[/]")
            if f.fix:
                verdict = {True: "re-checked: removes the finding", False: "re-checked: does NOT remove the finding",
                           None: "not re-checked"}[f.fix["removes"]]
                console.print(f"  [green]fix:[/] {escape(f.fix['text'])} [dim]({verdict})[/]")
                if f.target and f.fix.get("tir"):
                    console.print(f"  [dim]in TIR: {escape(f.fix['tir'])}[/]")
                for note in f.fix.get("notes", []):
                    console.print(f"  [dim]note: {escape(note)}[/]")
            if f.confirmation:
                for i, line in enumerate(f.confirmation.get("lines", [])):
                    head = "[bold]confirm:[/] " if i == 0 else "    "
                    console.print(f"  {head}{escape(line)}")
    for r in ([] if quiet else results):
        if r.race_free_when:    # check --conditions
            # What it rests on beyond the launch (an unread block dimension taken as 1, launch
            # bounds, the user's assumptions): said with it, clean kernel or not.
            given = f" (assumed: {'; '.join(r.assumptions)})" if r.assumptions else ""
            console.print(f"kernel {escape(r.kernel)} ({escape(r.file)}): {escape(r.race_free_when + given)}")
    if verbose and not quiet:
        for r in results:
            n = len(r.findings)
            console.print(f"[dim]kernel {escape(r.kernel)}{escape(_where(r))} ({escape(r.file)}): {r.status}, "
                          f"{n} finding(s), {r.seconds:.3f} s{' (cached)' if r.cached else ''}, {r.queries} solver quer{'y' if r.queries == 1 else 'ies'}[/]")
            for c in r.contracts:
                state = "in force" if c["in_force"] else "off (--no-contracts)"
                console.print(f"[dim]  contract: {escape(c['contract'])}, {state}, from {escape(c['origin'])}[/]")
            for said in r.assumed:
                console.print(f"[dim]  assumed: {escape(said)}[/]")
        total = sum(r.seconds for r in results)
        console.print(f"[dim]analysis: {total:.3f} s, {sum(r.queries for r in results)} solver queries; "
                      f"peak resident memory {_peak_mb():.0f} MB[/]")
    if llm is not None and not quiet:
        for one in (llm if isinstance(llm, list) else [llm]):   # several model configs: a table each
            print_llm_table(one, console)
    s = summary(results, hidden)
    style = "bold red" if s["errors"] else "bold green"
    tail = ", ".join(f"{s[k]} {label}" for k, label in (("in_baseline", "in baseline"), ("suppressed", "suppressed"))
                     if s[k])
    console.print(f"[{style}]{s['kernels']} kernel(s): {s['clean']} clean, {s['with_findings']} with findings, "
                  f"{s['unknown']} unknown; {s['errors']} error(s), {s['warnings']} warning(s)"
                  f"{', ' + str(s['notes']) + ' note(s)' if s['notes'] else ''}{'; ' + tail if tail else ''}"
                  f"{'; ' + str(s['unreplayed']) + ' witness(es) not validated' if s['unreplayed'] else ''}"
                  f"{'; ' + escape(shard_text(shard)) if shard else ''}[/]")


def shard_text(shard: dict[str, Any]) -> str:
    """`shard 2 of 3 (14 of 40 builds)`."""
    return f"shard {shard['index']} of {shard['count']} ({shard['units']} of {shard['of']} {shard['unit']})"


def _cell_text(row: dict[str, Any], notes: dict[str, int]) -> str:
    st = row["status"]
    if st in ("skipped", "failed"):
        n = notes.setdefault(row["reason"], len(notes) + 1)
        style = "dim" if st == "skipped" else "bold magenta"
        return f"[{style}]{st} {escape(f'[{n}]')}[/]"
    counts = row["findings"]
    shown = ", ".join(f"{counts[s]} {s}" for s in ("error", "warning", "note") if counts.get(s))
    if st == "clean":
        return f"[green]clean[/] ({escape(shown)})" if shown else "[green]clean[/]"
    if st == "unknown":
        said = [shown] if shown else []
        if row.get("reason"):     # not analysed (`kernelrace model`: TVM's error, a worker's death)
            said.append(f"[{notes.setdefault(row['reason'], len(notes) + 1)}]")
        return f"[yellow]unknown[/] ({escape(', '.join(said))})" if said else "[yellow]unknown[/]"
    worst = next((s for s in ("error", "warning", "note") if counts.get(s)), "note")
    return f"[{STYLE[worst]}]findings[/] ({escape(shown)})"


def _row_label(row: dict[str, Any]) -> str:
    """The kernel column: `kernelrace model` adds how many PrimFuncs a kernel stands for and the
    Relax functions that launch it (`fused_NT_matmul1_add (x2; decode, prefill)`)."""
    aliases, callers = row.get("aliases") or [], row.get("callers") or []
    said = "; ".join(p for p in (f"x{len(aliases) + 1}" if aliases else "", ", ".join(callers)) if p)
    return f"{row['kernel']} ({said})" if said else row["kernel"]


def print_llm_table(llm: dict[str, Any], console: Console) -> None:
    """`kernelrace llm`'s summary: one row per kernel, one column per target; skipped and failed
    cells point to their reason, listed once under the table."""
    from rich.table import Table

    shape = llm["shape"]
    title = ", ".join(f"{k}={v}" for k, v in shape.items() if v is not None)
    if llm.get("models"):
        title = f"{', '.join(llm['models'])} ({title})"
    if llm.get("command") == "model":    # `kernelrace model`: the model's name, its shape when a config gave it
        title = f"{llm['model']} ({title})" if title else llm["model"]
    t = Table(title=f"kernelrace {llm.get('command', 'llm')}: {escape(title)}", title_justify="left",
              show_lines=False)
    t.add_column("kernel", no_wrap=True)
    for target in llm["targets"]:
        t.add_column(target)
    notes: dict[str, int] = {}
    by_kernel: dict[str, dict[str, dict[str, Any]]] = {}
    for row in llm["rows"]:
        by_kernel.setdefault(_row_label(row), {})[row["target"]] = row
    for kernel, cells in by_kernel.items():
        t.add_row(escape(kernel), *(_cell_text(cells[tg], notes) if tg in cells else "" for tg in llm["targets"]))
    # Not a terminal (a pipe, a file): no width to fit, so do not squeeze the table into 80 columns.
    width = console.width
    if not console.is_terminal:
        console.width = max(width, 200)
    try:
        console.print(t)
    finally:
        console.width = width
    for reason, n in notes.items():
        console.print(f"  [dim]{escape(f'[{n}]')}[/] {escape(reason)}")


def _peak_mb() -> float:
    """The largest resident size this process or one of its workers (--jobs) reached, in MB."""
    import resource
    kb = max(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
    return kb / 1024
