"""A condition's readable form: an ISL set over parameters and launch extents printed as the
source's names say them (`H < blockDim.y`, `n < 16 * gridDim.x`), its negation (the race-freedom
condition), constraints chained where they bound one term from both sides."""

from __future__ import annotations

import re

import islpy as isl

IDENT = re.compile(r"^[A-Za-z_]\w*$")


def display(text: str, names: dict[str, str]) -> str:
    for k, v in names.items():
        text = text.replace(k, v)
    return text


def render(s: isl.Set, names: dict[str, str]) -> str:
    """A parameter set as a short condition over `names` (ISL parameter -> printed name):
    disjuncts joined by `or`, their constraints by `and`, each constraint with the scalar
    parameters on the left where there are some; `true` for the universe, `false` for empty."""
    if s.is_empty():
        return "false"
    if s.plain_is_universe() or s.is_equal(isl.Set.universe(s.get_space())):
        return "true"
    disjuncts = []
    for bs in s.get_basic_sets():
        if bs.dim(isl.dim_type.div):
            disjuncts.append(_via_ast(isl.Set.from_basic_set(bs), names))
            continue
        parts = [_constraint(c, names) for c in bs.get_constraints()]
        disjuncts.append(" and ".join(_chained(parts)) or "true")
    if len(disjuncts) == 1:
        return disjuncts[0]
    return " or ".join(f"({d})" if " and " in d else d for d in disjuncts)


_NEGATED = {"<": ">=", "<=": ">", ">": "<=", ">=": "<", "==": "!="}


def render_negation(s: isl.Set, names: dict[str, str]) -> str | None:
    """The negation of a conjunction of constraints, as the disjunction of each one negated
    (`H <= -blockDim.y or H >= blockDim.y or gridDim.x <= 1`): shorter than ISL's complement,
    which splits it into disjoint pieces. None for a union or a set with divisions."""
    parts = s.get_basic_sets()
    if len(parts) != 1 or parts[0].dim(isl.dim_type.div):
        return None
    out = []
    for c in parts[0].get_constraints():
        left, rel, right = _constraint(c, names)
        out.append(f"{left} {_NEGATED[rel]} {right}")
    return " or ".join(out) if out else "false"


def _via_ast(s: isl.Set, names: dict[str, str]) -> str:
    """A disjunct with divisions (`n % 16 == 0`): ISL's own C expression, names replaced."""
    build = isl.AstBuild.from_context(isl.Set.universe(s.get_space()))
    text = build.expr_from_set(s).to_C_str()
    text = text.replace("&&", "and").replace("||", "or")
    for ident in sorted(names, key=len, reverse=True):
        text = text.replace(ident, names[ident])
    return text


def _term_text(coefs: list[tuple[int, str]]) -> str:
    out = ""
    for c, n in coefs:
        mag = abs(c)
        piece = n if mag == 1 else f"{mag} * {n}"
        if not out:
            out = piece if c > 0 else f"-{piece}"
        else:
            out += f" + {piece}" if c > 0 else f" - {piece}"
    return out


def _with_const(text: str, k: int) -> str:
    if not text:
        return str(k)
    if k == 0:
        return text
    return f"{text} + {k}" if k > 0 else f"{text} - {-k}"


def _constraint(c: isl.Constraint, names: dict[str, str]) -> tuple[str, str, str]:
    """(left, relation, right) of one constraint `sum + k >= 0` (or `= 0`)."""
    space = c.get_space()
    coefs = []
    for i in range(space.dim(isl.dim_type.param)):
        v = c.get_coefficient_val(isl.dim_type.param, i).to_python()
        if v:
            ident = space.get_dim_name(isl.dim_type.param, i)
            coefs.append((int(v), names.get(ident, ident)))
    k = int(c.get_constant_val().to_python())
    # The scalar parameters (not launch extents) on the left, the first with a positive sign.
    launch = ("blockDim", "gridDim", "get_local_size", "get_num_groups", "threads_per", "threadgroups_per",
              "workgroup_size", "num_workgroups")
    subject = [x for x in coefs if not x[1].startswith(launch)] or coefs
    lead = subject[0]
    sign = 1 if lead[0] > 0 else -1
    left = [(sign * a, n) for a, n in subject]
    right = [(-sign * a, n) for a, n in coefs if (a, n) not in subject]
    k = -sign * k       # left >= right + k (sign 1) or left <= right + k (sign -1)
    if c.is_equality():
        return _term_text(left), "==", _with_const(_term_text(right), k)
    if sign > 0:
        # left >= right + k, i.e. left > right + k - 1
        if k == 1:
            return _term_text(left), ">", _term_text(right) or "0"
        return _term_text(left), ">=", _with_const(_term_text(right), k)
    # left <= right + k: strict when k == -1
    if k == -1:
        return _term_text(left), "<", _term_text(right) or "0"
    return _term_text(left), "<=", _with_const(_term_text(right), k)


def _chained(parts: list[tuple[str, str, str]]) -> list[str]:
    """`H > -blockDim.y` and `H < blockDim.y` as `-blockDim.y < H < blockDim.y`."""
    flip = {">": "<", ">=": "<="}
    out, used = [], set()
    for i, (left, rel, right) in enumerate(parts):
        if i in used:
            continue
        used.add(i)
        if rel == "==":
            out.append(f"{left} {rel} {right}")
            continue
        for j, (l2, r2, x2) in enumerate(parts):
            if j in used or l2 != left or (r2 in flip) == (rel in flip) or r2 == "==":
                continue
            used.add(j)
            (lo_rel, lo), (hi_rel, hi) = ((rel, right), (r2, x2)) if rel in flip else ((r2, x2), (rel, right))
            out.append(f"{lo} {flip[lo_rel]} {left} {hi_rel} {hi}")
            break
        else:
            out.append(f"{left} {rel} {right}")
    return out
