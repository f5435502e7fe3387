"""The condition of a race: on which scalar parameters and launch extents two accesses collide.

A race query (collision_constraints.py) is a set of constraints over two threads, their blocks and
loop iterations, loaded values, the kernel's scalar parameters and the launch extents. The race
condition is that set projected onto the parameters and extents: it holds exactly for the
launches in which some two threads collide. Where the constraints are Presburger (linear, with
floor and remainder by constants), the projection is exact, computed with ISL (islpy): the
constraints are translated from Z3's terms, every value that is not a parameter becomes an
existential variable, uninterpreted values (loads, opaque calls) are related by functional
consistency (equal arguments, equal values: Ackermann's reduction, exact), and a product of
two parameters is one atom (exact: the condition reads it as the product).

A product of a thread's value and a parameter (`blockIdx.x * H`) is not Presburger. Two
projections bracket it: an upper one, where the product is any value that obeys the sign and
magnitude laws of products (|x*P| >= |P| when x != 0, and the same for the difference of two
threads' products with one factor), and a lower one, where the thread's factor is 0 or 1 (the
product then is 0 or P). The first over-approximates the race condition, the second
under-approximates it; where they agree, the condition is exact. Otherwise the lower one is a
sufficient condition (`races at least when ...`), said as such; where neither can be computed
(bit operations, a product of two thread values, ISL out of its budget) the witness's own values
are (`races at least when H=1, blockDim.y=4`).

The condition is printed over the source's names, simplified against the facts every launch
satisfies (extents within the hardware's limits, parameters within their type's range, stated
assumptions), so that a race in every launch reads `true`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import islpy as isl
import z3

from analyzer.analysis.conditions.condition_text import IDENT, display, render
from analyzer.analysis.decision.presburger import NotPresburger, Translation

# ISL's budget for one condition (its own count of operations). A projection of a kernel's pair
# takes a few thousand; what runs out falls back to the witness's values.
ISL_OPERATIONS = 400_000


@dataclass
class Condition:
    """A race's condition: `text` ("true" when every launch races), whether it is exact (else a
    sufficient condition), and `how` ("exact", "sufficient", "witness")."""
    text: str
    exact: bool
    how: str
    # The condition and its domain as ISL sets over the source's names (`blockDim_y`), for a
    # kernel's race-freedom condition (race_freedom.py); None where there is no set.
    isl_set: str | None = None
    isl_domain: str | None = None

    @property
    def unconditional(self) -> bool:
        return self.exact and self.text == "true"

    def phrase(self) -> str:
        """How the finding's first line says it."""
        if self.unconditional:
            return "races for every launch"
        if self.exact:
            return f"races when {self.text}"
        return f"races at least when {self.text}"

    def as_dict(self) -> dict:
        return {"text": self.text, "exact": self.exact, "how": self.how}


@dataclass
class ConditionQuery:
    """What a race's condition is computed from, kept with the hazard until its finding is made
    (then computed once): the query's constraints, the ids of those that always hold (the
    encoder's base), the parameters, and the witness's values of them."""
    constraints: list
    base: set
    params: list[str]
    values: dict[str, int]
    # Ids of the facts that tell the stored values apart (unwritten.py), which a projection that
    # cannot read them must not go without.
    optional: frozenset = frozenset()

    def condition(self, names: dict[str, str] | None = None) -> Condition:
        return queries_condition([self], names)


def queries_condition(queries: list[ConditionQuery], names: dict[str, str] | None = None) -> Condition:
    """The condition of a race any of `queries` describes (one finding's: the pair's order groups,
    the lanes and instances the report folds into it), projected together (`union_condition`)."""
    memo: dict[int, frozenset] = {}
    params = sorted(set().union(*(q.params for q in queries)))
    wanted = set(params)
    values = {k: v for q in reversed(queries) for k, v in q.values.items()}
    pieces, seen = [], set()
    for q in queries:
        key = tuple(c.get_id() for c in q.constraints)
        if key in seen:
            continue        # the same query twice (two hazards of one collision): once
        seen.add(key)
        # The facts every launch satisfies: the always-true constraints over parameters only.
        domain = [c for c in q.constraints if c.get_id() in q.base and _names(c, memo) <= wanted]
        pieces.append((q.constraints, domain, q.optional))
    # The witness's values, for the fallback, are the first query's.
    values.update(queries[0].values)
    if any(optional for _, _, optional in pieces):
        # Facts the witness needed to tell the stored values apart (unwritten.py): without them the
        # projection would take in launches where the two values are one, so where ISL cannot
        # project them, the witness's values are the condition.
        try:
            return _projected([(c, d) for c, d, _ in pieces], params, names or {})
        except (NotPresburger, isl.Error, RecursionError):
            read = set().union(*(_names(c, memo) for c in pieces[0][0]))
            return witness_condition({k: v for k, v in values.items() if k in read}, names)
    return union_condition([(c, d) for c, d, _ in pieces], params, values, names, memo)


def condition_query(enc, constraints: list, model, optional=()) -> ConditionQuery:
    """The `ConditionQuery` of a satisfiable query built by `enc` (solver.Encoder) with `model`;
    `optional`: ids of its facts about stored values (see `ConditionQuery.optional`)."""
    params = [n for n in sorted(enc.shared) if n in enc.kernel.params or n.startswith(("blockDim.", "gridDim."))]
    values = {n: model.eval(enc.shared[n], model_completion=True).as_long() for n in params}
    kept = frozenset(c.get_id() for c in constraints if c.get_id() in optional)
    return ConditionQuery(list(constraints), {c.get_id() for c in enc.base}, params, values, kept)


def _names(e, memo: dict) -> frozenset:
    """The uninterpreted constants of a Z3 term (an application of `f` counts as `f()`), through
    Z3's C API (z3py wraps every node it visits), remembered by node id in `memo`."""
    core = z3.z3core
    ref = e.ctx.ref()
    app = z3.Z3_APP_AST
    stack = [(e.as_ast(), False)]
    while stack:
        x, ready = stack.pop()
        i = core.Z3_get_ast_id(ref, x)
        if i in memo:
            continue
        if core.Z3_get_ast_kind(ref, x) != app:
            memo[i] = frozenset()
            continue
        n = core.Z3_get_app_num_args(ref, x)
        kids = [core.Z3_get_app_arg(ref, x, k) for k in range(n)]
        if not ready:
            stack.append((x, True))
            stack.extend((c, False) for c in kids)
            continue
        d = core.Z3_get_app_decl(ref, x)
        own: frozenset = frozenset()
        if core.Z3_get_decl_kind(ref, d) == z3.Z3_OP_UNINTERPRETED:
            name = core.Z3_get_symbol_string(ref, core.Z3_get_decl_name(ref, d))
            own = frozenset({name if not n else name + "()"})
        memo[i] = own.union(*(memo[core.Z3_get_ast_id(ref, c)] for c in kids))
    return memo[e.get_id()]


def display_names(lang: str) -> dict[str, str]:
    """The solver's launch extents by the names the dialect gives them."""
    dims = ("x", "y", "z")
    if lang == "opencl":
        return {**{f"blockDim.{d}": f"get_local_size({i})" for i, d in enumerate(dims)},
                **{f"gridDim.{d}": f"get_num_groups({i})" for i, d in enumerate(dims)}}
    if lang == "metal":
        return {**{f"blockDim.{d}": f"threads_per_threadgroup.{d}" for d in dims},
                **{f"gridDim.{d}": f"threadgroups_per_grid.{d}" for d in dims}}
    if lang in ("spirv", "wgsl"):
        return {**{f"blockDim.{d}": f"workgroup_size.{d}" for d in dims},
                **{f"gridDim.{d}": f"num_workgroups.{d}" for d in dims}}
    return {}


def race_condition(constraints: list, domain: list, params: list[str], witness: dict[str, int],
                   names: dict[str, str] | None = None, memo: dict | None = None) -> Condition:
    """The condition of the race the satisfiable `constraints` (Z3) describe, over the constants
    named in `params` (scalar parameters and symbolic extents), simplified under `domain` (Z3
    constraints over them only: what every launch satisfies). `witness`: a model's values of those
    parameters, for the fallback. `names`: how to print a parameter (default: its own name)."""
    return union_condition([(constraints, domain)], params, witness, names, memo)


def union_condition(queries: list[tuple[list, list]], params: list[str], witness: dict[str, int],
                    names: dict[str, str] | None = None, memo: dict | None = None) -> Condition:
    """The condition of a race that any of `queries` ((constraints, domain) as `race_condition`
    takes them: a pair's order groups, the lanes and instances one finding stands for) describes:
    the union of their projections, each exact or bracketed on its own. A query that cannot be
    projected leaves the union a sufficient condition; none projected, the witness's values."""
    names = names or {}
    try:
        return _projected(queries, params, names)
    except (NotPresburger, isl.Error, RecursionError):
        pass
    # The witness's values of the parameters the first query reads.
    memo = {} if memo is None else memo
    constraints = queries[0][0] if queries else []
    read = set().union(*(_names(c, memo) for c in constraints)) if constraints else set()
    return witness_condition({k: v for k, v in witness.items() if k in read}, names)


def witness_condition(values: dict[str, int], names: dict[str, str] | None = None) -> Condition:
    """The sufficient condition a witness's own values are."""
    names = names or {}
    shown = ", ".join(f"{names.get(k, k)}={v}" for k, v in values.items())
    return Condition(shown or "true", exact=False, how="witness")


def _bracket(ctx, constraints, domain, params, atoms) -> tuple[isl.Set, isl.Set | None, isl.Set]:
    """(lower projection, upper projection or None where it could not be computed, domain) of
    one query, as ISL sets over the parameters' identifiers and the products' atoms."""
    lower = Translation(params, "lower", atoms)
    core = lower.translate(constraints)
    # The two brackets differ only in how they read products: one translation serves both.
    lo_body = core + lower._product_laws()
    lower.mode = "upper"
    up_body = core + lower._product_laws() if lower.products else None
    upper = lower
    dom = Translation(params, "lower", atoms)
    dom_body = dom.translate(domain)
    head = "[" + ", ".join([lower.ident(p) for p in params] + list(atoms.values())) + "] -> "
    D = dom.projected(ctx, head, dom_body)
    low = lower.projected(ctx, head, lo_body).intersect(D).coalesce()
    up = low
    if up_body is not None and not D.is_subset(low):    # a race in every launch needs no bracket
        ctx.reset_operations()
        try:
            up = upper.projected(ctx, head, up_body).intersect(D).coalesce()
        except isl.Error:
            up = None     # out of budget: the lower projection stands, as a sufficient condition
    return low, up, D


def _touching(constraints: list, params: list[str], memo: dict) -> list:
    """The constraints linked to a parameter through the values (and uninterpreted functions)
    they share. The others, a part of a satisfiable query that names no parameter, hold for some
    values whatever the parameters are: leaving them out changes no projection. They are most of a
    query where the encoder states lemmas about constants (a power's digits, a radix)."""
    wanted = set(params)
    parent: dict[str, str] = {}

    def root(x: str) -> str:
        while parent.setdefault(x, x) != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    own = [sorted(_names(c, memo) - wanted) for c in constraints]
    for names in own:
        for n in names[1:]:
            parent[root(n)] = root(names[0])
    linked = {root(n) for c, names in zip(constraints, own) if _names(c, memo) & wanted for n in names}
    return [c for c, names in zip(constraints, own)
            if _names(c, memo) & wanted or any(root(n) in linked for n in names)]


def _projected(queries, params, names) -> Condition:
    # Every query is satisfiable (the race's own, or one of its order groups'), so a part of it
    # that names no parameter may go (`_touching`).
    memo: dict[int, frozenset] = {}
    queries = [(_touching(c, params, memo), _touching(d, params, memo)) for c, d in queries]
    ctx = isl.Context()
    ctx.set_max_operations(ISL_OPERATIONS)
    atoms: dict[str, str] = {}     # shared: a product of parameters is one ISL parameter in all
    brackets, missing = [], False
    for constraints, domain in queries:
        ctx.reset_operations()
        try:
            brackets.append(_bracket(ctx, constraints, domain, params, atoms))
        except (NotPresburger, isl.Error, RecursionError):
            missing = True      # the union without it: a sufficient condition
            continue
        low, _, D = brackets[-1]
        ctx.reset_operations()      # the upper bracket may have spent the budget
        if D.is_subset(low):
            break               # a race in every launch: the others add nothing
    ctx.reset_operations()
    if not brackets:
        raise NotPresburger("no query projected")
    sets = _aligned([x for b in brackets for x in b if x is not None])
    it = iter(sets)
    aligned = [(next(it), next(it) if up is not None else None, next(it)) for _, up, _ in brackets]
    D = aligned[0][2]
    for _, _, d in aligned[1:]:
        D = D.intersect(d)
    low = aligned[0][0]
    for l, _, _ in aligned[1:]:
        low = low.union(l)
    low = low.intersect(D).coalesce()
    if D.is_subset(low):
        exact = True
    elif missing or any(u is None for _, u, _ in aligned):
        exact = False
    else:
        ctx.reset_operations()
        try:
            up = aligned[0][1]
            for _, u, _ in aligned[1:]:
                up = up.union(u)
            exact = up.intersect(D).is_subset(low)
        except isl.Error:
            exact = False     # out of budget: the lower projections stand, as a sufficient condition
        ctx.reset_operations()
    if low.is_empty():
        raise NotPresburger("no sufficient condition found")
    idents = {f"p{i}_": p for i, p in enumerate(params)}
    shown = {i: names.get(p, p) for i, p in idents.items()}
    shown.update({ident: display(text, names) for text, ident in atoms.items()})
    text = render(low.gist(D).coalesce(), shown)
    canon = None
    if not atoms and all(IDENT.match(p.replace(".", "_")) for p in params):
        rename = {i: p.replace(".", "_") for i, p in idents.items()}
        canon = tuple(re.sub(r"(?<![A-Za-z_])p\d+_", lambda m: rename[m.group(0)], str(x)) for x in (low, D))
    return Condition(text, exact, "exact" if exact else "sufficient", *(canon or (None, None)))


def _aligned(sets: list[isl.Set]) -> list[isl.Set]:
    """The sets over one parameter space (the union of theirs, by name)."""
    model = sets[0].get_space()
    for s in sets[1:]:
        model = model.align_params(s.get_space())
    return [s.align_params(model) for s in sets]


# ---- printing ----
