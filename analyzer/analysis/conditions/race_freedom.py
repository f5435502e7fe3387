"""A kernel's race-freedom condition (`check --conditions`): the weakest condition on its
parameters and launch extents under which none of its races exists, the conjunction of the
negated race conditions (race_condition.py), simplified with ISL over the source's names.

Each race condition comes as ISL text over parameters named after the source (`blockDim_y`,
`H`), with the domain every launch satisfies. Where a race's condition is only sufficient, its
negation is only necessary for race-freedom: the result then says `only if`. Where a race has no
condition at all (its witness's values), or the kernel has findings that are not races, there is
nothing to say but why.
"""

from __future__ import annotations

from dataclasses import dataclass

import islpy as isl

from analyzer.analysis.conditions.condition_text import render, render_negation
from analyzer.analysis.conditions.race_condition import ISL_OPERATIONS


@dataclass
class RaceFreedom:
    text: str          # the condition, or why there is none
    exact: bool        # the weakest condition (else: necessary only, or none)
    known: bool        # False: no condition could be given (`text` says why)

    def phrase(self) -> str:
        if not self.known:
            return f"race-free condition unknown: {self.text}"
        if self.text == "true":
            return "race-free for every launch"
        if self.text == "false":
            return "races for every launch"
        return f"race-free when {self.text}" if self.exact else f"race-free only if {self.text}"


def race_freedom(conditions: list[tuple[str | None, str | None, bool]]) -> RaceFreedom:
    """`conditions`: per race finding, (its set as ISL text or None, the domain's ISL text, exact)."""
    if not conditions:
        return RaceFreedom("true", True, True)
    if any(s is None for s, _, _ in conditions):
        return RaceFreedom("a race's condition is only its witness's values", False, False)
    ctx = isl.Context()
    ctx.set_max_operations(ISL_OPERATIONS)
    try:
        sets = [isl.Set.read_from_str(ctx, s) for s, _, _ in conditions]
        doms = [isl.Set.read_from_str(ctx, d) for _, d, _ in conditions]
        union = _aligned(sets + doms)
        races = union[0]
        for s in union[1:len(sets)]:
            races = races.union(s)
        domain = union[len(sets)]
        for d in union[len(sets) + 1:]:
            domain = domain.intersect(d)
        free = domain.subtract(races).coalesce()
        names = {n: n.replace("_", ".", 1) if n.startswith(("blockDim_", "gridDim_")) else n
                 for n in _param_names(free)}
        # Each race a conjunction: the negation of each, as a disjunction, reads best.
        negated = [render_negation(s.gist(domain).coalesce(), names) for s in union[:len(sets)]]
        if free.is_empty():
            text = "false"
        elif all(n is not None and n != "false" for n in negated):
            unique = list(dict.fromkeys(negated))
            text = unique[0] if len(unique) == 1 else " and ".join(f"({n})" if " or " in n else n for n in unique)
        else:
            text = render(free.gist(domain).coalesce(), names)
    except isl.Error:
        return RaceFreedom("out of ISL's budget", False, False)
    return RaceFreedom(text, all(e for _, _, e in conditions), True)


def _param_names(s: isl.Set) -> list[str]:
    sp = s.get_space()
    return [sp.get_dim_name(isl.dim_type.param, i) for i in range(sp.dim(isl.dim_type.param))]


def _aligned(sets: list[isl.Set]) -> list[isl.Set]:
    """The sets over one parameter space (the union of theirs, by name)."""
    model = sets[0].get_space()
    for s in sets[1:]:
        model = model.align_params(s.get_space())
    return [s.align_params(model) for s in sets]
