"""`kernelrace confirm`: each race finding run on concrete inputs, to show what it does to the output.

For a finding with a witness, the kernel's block runs on seeded inputs (analyzer/dynamic/) in the
order that loses (the witness's second thread first, then its first, then the rest), and once more
to compare against: with the verified fix hint applied when there is one, else in lockstep (every
thread one statement at a time, what a kernel that races within a warp assumes), else in the
reverse order. The global elements that differ are the race's effect on these inputs. With a fix, the fixed
kernel is also run in both orders, to show the hint leaves no order-dependence there. "No
difference observed" only says these inputs and orders did not expose the race: never that it is
refuted.
"""

from __future__ import annotations

from typing import Any

from analyzer import ir
from analyzer.analysis.barriers.fixes import apply_hint
from analyzer.dynamic import schedule
from analyzer.dynamic.launch import make_launch
from analyzer.dynamic.values import InterpretError, same, show
from analyzer.findings import RACE_RULES, Finding, KernelResult

FIRST_SHOWN = 1     # differing elements named per buffer


def confirm_results(pairs: list[tuple[ir.Kernel, KernelResult]], defines: dict[str, int], seed: int = 0,
                    blocks: int = 1) -> None:
    """Attach a `confirmation` to every race finding of the results (each with its kernel's IR)."""
    for kernel, result in pairs:
        for f in result.findings:
            if f.rule in RACE_RULES and f.witness and "second_block" not in f.witness:
                f.confirmation = confirm(kernel, f, defines, seed, _in_force(result), blocks)


def _in_force(result: KernelResult) -> list[str]:
    return [c["contract"] for c in result.contracts if c.get("in_force")]


def confirm(kernel: ir.Kernel, f: Finding, defines: dict[str, int], seed: int = 0,
            contracts: list[str] = (), count: int = 1) -> dict[str, Any]:
    """The finding run in the order that loses and compared (see the module's docstring), on the
    witness's block and the `count - 1` blocks after it."""
    w = f.witness
    block = tuple(w.get("block") or (0, 0, 0))
    try:
        launch = make_launch(kernel, defines, w, seed, [block], contracts=contracts)
        blocks = _blocks(block, launch.grid_dim, count)
        losing = schedule.order("witness", launch, seed, _lead(w, launch))
        fixed = apply_hint(kernel, f) if (f.fix or {}).get("removes") else None
        lose = schedule.run(kernel, launch, losing, blocks)
        if fixed is not None:
            other, against = schedule.run(fixed, launch, losing, blocks), "the fix hint applied"
        else:
            # What the kernel's author expected: every thread one statement at a time; failing a
            # difference there, the reverse order.
            other, against = schedule.run(kernel, launch, losing, blocks, lockstep=True), "lockstep execution"
            if not _diff(lose, other, kernel):
                other, against = schedule.run(kernel, launch, losing[::-1], blocks), "the reverse order"
        fixed_check = None
        if fixed is not None:
            reverse = schedule.run(fixed, launch, losing[::-1], blocks)
            fixed_check = (_diff(other, reverse, kernel), other.races + reverse.races)
    except InterpretError as exc:
        return {"status": "cannot-run", "lines": [f"cannot interpret: {exc}"], "reason": str(exc)}
    except (ArithmeticError, TypeError, ValueError, KeyError, IndexError, RecursionError) as exc:
        # A value the interpreter has no rule for (a bug of ours or an unmodelled type): the
        # finding stands, unconfirmed.
        why = f"{type(exc).__name__}: {exc}"
        return {"status": "cannot-run", "lines": [f"cannot interpret: {why}"], "reason": why}
    diffs = _diff(lose, other, kernel)
    seen = [r for r in lose.races if r.lines == frozenset((f.first.line if f.first else 0, f.second.line))]
    t1, t2 = (_thread(w["first_thread"]), _thread(w["second_thread"]))
    shown = f"block {_thread(block)}" if len(blocks) == 1 else f"{len(blocks)} blocks from {_thread(block)}"
    warp = "" if w.get("same_warp", True) else " and the rest of its warp"
    lines = [f"ran {shown} with {_params(launch.params)}, seed {seed}: thread {t2}{warp} first, then {t1}, "
             f"then the others ascending, against {against}"]
    lines.append(("race observed: " + _shown(seen[0], kernel)) if seen else
                 "the race was not observed in this run (the accesses did not meet on these inputs)")
    if diffs:
        for d in diffs:
            lines.append(f"{d['buffer']}: {d['differ']}/{d['elements']} elements differ between the losing order and "
                         f"{against}, first {d['buffer']}[{d['first']['index']}]: {d['first']['losing']} vs "
                         f"{d['first']['other']}")
    else:
        lines.append("no difference observed with these inputs (the race may still be real: other inputs or "
                     "orders may expose it)")
    out: dict[str, Any] = {"status": "differs" if diffs else "no-difference", "against": against,
                           "seed": seed, "block": list(block), "params": dict(launch.params),
                           "order": [_thread(w["second_thread"]), _thread(w["first_thread"])],
                           "race_observed": bool(seen), "buffers": diffs}
    if fixed_check is not None:
        fdiffs, fraces = fixed_check
        same_out = not fdiffs
        out["fixed"] = {"differs_between_orders": not same_out, "buffers": fdiffs,
                        "races": [r.describe() for r in fraces[:3]]}
        lines.append("with the fix: " + ("the same output in the losing and the reverse order" if same_out else
                                         f"{len(fdiffs)} buffer(s) still differ between the two orders")
                     + (", no race observed" if not fraces else f", {len(fraces)} race(s) still observed"))
    out["lines"] = lines
    return out


def _lead(w: dict, launch) -> tuple:
    """The threads that run first: the witness's second, its warp when the first is in another
    (a warp barrier then lets that warp run ahead), then the witness's first."""
    t1, t2 = tuple(w["first_thread"]), tuple(w["second_thread"])
    lin = lambda t: schedule.linear(t, launch.block_dim)  # noqa: E731
    ws = launch.warp_size
    lead = [t2]
    if lin(t1) // ws != lin(t2) // ws:
        bd = launch.block_dim
        lead += [(i % bd["x"], i // bd["x"] % bd["y"], i // (bd["x"] * bd["y"]))
                 for i in range(lin(t2) // ws * ws, min((lin(t2) // ws + 1) * ws, launch.threads)) if i != lin(t2)]
    return tuple(lead + [t1])


def _blocks(first: tuple, grid: dict[str, int], count: int) -> list[tuple[int, int, int]]:
    """`first` and the blocks after it in the grid's linear order, `count` in all (fewer at its end)."""
    gx, gy, gz = grid["x"], grid["y"], grid["z"]
    start = first[0] + gx * (first[1] + gy * first[2])
    return [(i % gx, i // gx % gy, i // (gx * gy)) for i in range(start, min(start + count, gx * gy * gz))]


def _diff(a: schedule.Run, b: schedule.Run, kernel: ir.Kernel) -> list[dict[str, Any]]:
    out = []
    for buf in sorted(set(a.written) | set(b.written)):
        idx = sorted(a.written.get(buf, set()) | b.written.get(buf, set()))
        ma, mb = a.memory.get(buf, {}), b.memory.get(buf, {})
        bad = [i for i in idx if not same(ma.get(i), mb.get(i))]
        if bad:
            decl = kernel.buffers.get(buf)
            name = (decl.display if decl is not None and decl.display else buf)
            i = bad[0]
            out.append({"buffer": name, "differ": len(bad), "elements": len(idx),
                        "first": {"index": i, "losing": show(ma.get(i)), "other": show(mb.get(i))}})
    return out


def _shown(race, kernel: ir.Kernel) -> str:
    decl = kernel.buffers.get(race.buffer)
    text = race.describe()
    return text.replace(f"{race.buffer}[", f"{decl.display}[") if decl is not None and decl.display else text


def _thread(t) -> str:
    return "(" + ",".join(str(v) for v in t) + ")"


def _params(params: dict[str, int]) -> str:
    shown = [f"{k}={v}" for k, v in params.items() if not k.startswith("cse_v")]
    return ", ".join(shown) if shown else "no parameters"
