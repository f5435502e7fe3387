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

# ISL's budget for one condition (its own count of operations). A projection of a kernel's pair
# takes a few thousand; what runs out falls back to the witness's values.
ISL_OPERATIONS = 400_000
# More uninterpreted applications than this: Ackermann's constraints grow with their square.
MAX_APPLICATIONS = 24
ONE_SHOT_WIDTH = 5_000
MAX_WIDTH = 1_000_000
MAX_PRODUCTS = 6


class NotPresburger(Exception):
    """A constraint outside what the translation reads (bit vectors, a product of two thread values)."""


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
        pieces.append((q.constraints, domain))
    # The witness's values, for the fallback, are the first query's.
    values.update(queries[0].values)
    return union_condition(pieces, params, values, names, memo)


def condition_query(enc, constraints: list, model) -> ConditionQuery:
    """The `ConditionQuery` of a satisfiable query built by `enc` (solver.Encoder) with `model`."""
    params = [n for n in sorted(enc.shared) if n in enc.kernel.params or n.startswith(("blockDim.", "gridDim."))]
    values = {n: model.eval(enc.shared[n], model_completion=True).as_long() for n in params}
    return ConditionQuery(list(constraints), {c.get_id() for c in enc.base}, params, values)


def _names(e, memo: dict) -> frozenset:
    """The uninterpreted constants of a Z3 term (a function application counts as `()`), through
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
            own = frozenset({core.Z3_get_symbol_string(ref, core.Z3_get_decl_name(ref, d)) if not n else "()"})
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
    lower = _Translation(params, "lower", atoms)
    core = lower.translate(constraints)
    # The two brackets differ only in how they read products: one translation serves both.
    lo_body = core + lower._product_laws()
    lower.mode = "upper"
    up_body = core + lower._product_laws() if lower.products else None
    upper = lower
    dom = _Translation(params, "lower", atoms)
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


def _projected(queries, params, names) -> Condition:
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


class _Translation:
    """Z3 constraints as the text of an ISL set: parameters stay ISL parameters, every other
    value an existential variable. `mode`: how a product of a thread value and a parameter is
    read ("lower": the thread value is 0 or 1; "upper": the laws of products)."""

    def __init__(self, params: list[str], mode: str, atoms: dict[str, str]):
        self.params = set(params)
        self.mode = mode
        self.param_idents_by_name = {p: f"p{i}_" for i, p in enumerate(params)}
        self.vars: dict[str, str] = {}          # Z3 name -> ISL existential
        self.fresh = 0
        self.side: list[str] = []                # constraints the existentials introduced carry
        self.memo: dict[int, str] = {}
        self.apps: dict[str, list[tuple[list[str], str]]] = {}
        self.products: list[tuple[str, str, str, int]] = []   # (x, p, m, id of p)
        self.atoms = atoms       # printed product of parameters -> ISL parameter
        self.napps = 0

    def ident(self, name: str) -> str:
        return self.param_idents_by_name[name]

    def _new(self) -> str:
        self.fresh += 1
        return f"e{self.fresh}_"

    def translate(self, constraints) -> list[str]:
        """The constraints as ISL constraint texts, with those the translation introduced (the
        products' own, which depend on the mode, not included: `_product_laws`)."""
        body = [self.boolean(c) for c in constraints]
        return body + self._ackermann() + self.side

    def projected(self, ctx, head: str, body: list[str]) -> isl.Set:
        """The set of `body` (see `translate`) projected onto the parameters."""
        dims = list(self.vars.values()) + [f"e{i}_" for i in range(1, self.fresh + 1)]
        tup = "[" + ", ".join(dims) + "]"
        # The disjuncts its normal form may have, at most: over the limit, not tried (the cost of
        # a projection follows it; measured on the fixtures, those under it take at most 0.3 s).
        width = 1
        for b in body:
            width *= b.count(" or ") + 1
        if width <= ONE_SHOT_WIDTH:
            inner = " and ".join(f"({b})" for b in body) or "true"
            return isl.Set.read_from_str(ctx, head + "{ " + tup + " : " + inner + " }").params()
        if width > MAX_WIDTH:
            raise NotPresburger(f"{width} disjuncts")
        # Wider: one constraint at a time, the conjunctive ones first, so that the disjuncts of the
        # next one meet a set already narrowed (most of their combinations are empty).
        pieces = sorted((isl.Set.read_from_str(ctx, head + "{ " + tup + " : " + b + " }") for b in body),
                        key=lambda x: x.n_basic_set())
        acc = isl.Set.read_from_str(ctx, head + "{ " + tup + " }")
        for piece in pieces:
            acc = acc.intersect(piece)
            if acc.n_basic_set() > 1:
                acc = acc.coalesce()
        return acc.params()

    # ---- booleans ----

    def boolean(self, e, negate: bool = False) -> str:
        if z3.is_true(e):
            return "false" if negate else "true"
        if z3.is_false(e):
            return "true" if negate else "false"
        k = e.decl().kind() if z3.is_app(e) else None
        kids = e.children() if z3.is_app(e) else []
        if k == z3.Z3_OP_NOT:
            return self.boolean(kids[0], not negate)
        if k in (z3.Z3_OP_AND, z3.Z3_OP_OR):
            conj = (k == z3.Z3_OP_AND) != negate
            parts = [self.boolean(c, negate) for c in kids]
            return (" and " if conj else " or ").join(f"({p})" for p in parts) or ("true" if conj else "false")
        if k == z3.Z3_OP_IMPLIES:
            a, b = kids
            if negate:
                return f"({self.boolean(a)}) and ({self.boolean(b, True)})"
            return f"({self.boolean(a, True)}) or ({self.boolean(b)})"
        if k == z3.Z3_OP_EQ and z3.is_bool(kids[0]):
            a, b = kids
            same = f"(({self.boolean(a)}) and ({self.boolean(b)})) or (({self.boolean(a, True)}) and ({self.boolean(b, True)}))"
            diff = f"(({self.boolean(a)}) and ({self.boolean(b, True)})) or (({self.boolean(a, True)}) and ({self.boolean(b)}))"
            return diff if negate else same
        if k == z3.Z3_OP_ITE and z3.is_bool(e):
            c, a, b = kids
            return (f"(({self.boolean(c)}) and ({self.boolean(a, negate)})) or "
                    f"(({self.boolean(c, True)}) and ({self.boolean(b, negate)}))")
        if k == z3.Z3_OP_DISTINCT:
            if len(kids) != 2:
                raise NotPresburger("distinct of more than two")
            return self._compare("=" if negate else "!=", *kids)
        ops = {z3.Z3_OP_LE: ("<=", ">"), z3.Z3_OP_LT: ("<", ">="), z3.Z3_OP_GE: (">=", "<"),
               z3.Z3_OP_GT: (">", "<="), z3.Z3_OP_EQ: ("=", "!=")}
        if k in ops:
            return self._compare(ops[k][1 if negate else 0], *kids)
        raise NotPresburger(f"boolean {e.decl().name() if z3.is_app(e) else e}")

    def _compare(self, op: str, a, b) -> str:
        x, y = self.term(a), self.term(b)
        if op == "!=":
            return f"({x}) < ({y}) or ({x}) > ({y})"
        return f"({x}) {op} ({y})"

    # ---- integer terms ----

    def term(self, e) -> str:
        key = e.get_id()
        hit = self.memo.get(key)
        if hit is None:
            hit = self.memo[key] = self._term(e)
        return hit

    def _term(self, e) -> str:
        if z3.is_int_value(e):
            return str(e.as_long())
        if not z3.is_app(e) or not z3.is_int(e):
            raise NotPresburger(f"term {e}")
        k = e.decl().kind()
        kids = e.children()
        if k == z3.Z3_OP_UNINTERPRETED:
            name = e.decl().name()
            if not kids:
                if name in self.params:
                    return self.ident(name)
                if name not in self.vars:
                    self.vars[name] = f"v{len(self.vars)}_"
                return self.vars[name]
            return self._application(name, kids)
        if k == z3.Z3_OP_ADD:
            return " + ".join(f"({self.term(c)})" for c in kids)
        if k == z3.Z3_OP_SUB:
            return " - ".join(f"({self.term(c)})" for c in kids)
        if k == z3.Z3_OP_UMINUS:
            return f"-({self.term(kids[0])})"
        if k == z3.Z3_OP_MUL:
            consts = [c for c in kids if z3.is_int_value(c)]
            rest = [c for c in kids if not z3.is_int_value(c)]
            factor = 1
            for c in consts:
                factor *= c.as_long()
            if not rest:
                return str(factor)
            out = self.term(rest[0]) if len(rest) == 1 else self._product(rest)
            return f"{factor} * ({out})" if factor != 1 else out
        if k in (z3.Z3_OP_IDIV, z3.Z3_OP_MOD):
            a, b = kids
            if not z3.is_int_value(b) or b.as_long() == 0:
                raise NotPresburger("division by a value")
            c = b.as_long()
            x = self.term(a)
            if k == z3.Z3_OP_MOD:
                return f"({x}) mod {abs(c)}"
            # SMT-LIB's div is Euclidean: floor for a positive divisor, and q(a, -c) = -q(a, c).
            return f"floor(({x}) / {c})" if c > 0 else f"-floor(({x}) / {-c})"
        if k == z3.Z3_OP_ITE:
            c, a, b = kids
            v = self._new()
            self.side.append(f"(({self.boolean(c)}) and {v} = ({self.term(a)})) or "
                             f"(({self.boolean(c, True)}) and {v} = ({self.term(b)}))")
            return v
        raise NotPresburger(f"operation {e.decl().name()}")

    def _application(self, name: str, kids) -> str:
        """An uninterpreted function's value: an existential, equal to every other application of
        the function with equal arguments (`_ackermann`)."""
        self.napps += 1
        if self.napps > MAX_APPLICATIONS:
            raise NotPresburger("too many uninterpreted values")
        args = [self.term(c) for c in kids]
        v = self._new()
        self.apps.setdefault(name, []).append((args, v))
        return v

    def _ackermann(self) -> list[str]:
        out = []
        for apps in self.apps.values():
            for i in range(len(apps)):
                for j in range(i):
                    (a1, v1), (a2, v2) = apps[i], apps[j]
                    differ = " or ".join(f"({x}) < ({y}) or ({x}) > ({y})" for x, y in zip(a1, a2))
                    out.append(f"{differ} or {v1} = {v2}")
        return out

    def _param_only(self, e) -> bool:
        key = ("param-only", e.get_id())
        hit = self.memo.get(key)
        if hit is None:
            hit = self.memo[key] = self._param_only_of(e)
        return hit

    def _param_only_of(self, e) -> bool:
        if z3.is_int_value(e):
            return True
        if not z3.is_app(e):
            return False
        if e.decl().kind() == z3.Z3_OP_UNINTERPRETED:
            return not e.children() and e.decl().name() in self.params
        return all(self._param_only(c) for c in e.children())

    def _product(self, factors) -> str:
        fixed = [f for f in factors if self._param_only(f)]
        moving = [f for f in factors if not self._param_only(f)]
        if len(moving) > 1:
            raise NotPresburger("a product of two thread values")
        if fixed and not moving:
            text = " * ".join(_z3_text(f) for f in fixed)
            if text not in self.atoms:
                self.atoms[text] = f"q{len(self.atoms)}_"
            return self.atoms[text]
        p = self.term(fixed[0]) if len(fixed) == 1 else self._product(fixed)
        pid = fixed[0].get_id() if len(fixed) == 1 else hash(p)
        x = self.term(moving[0])
        if len(self.products) >= MAX_PRODUCTS:
            raise NotPresburger("too many products")
        m = self._new()
        self.products.append((x, p, m, pid))
        return m

    def _product_laws(self) -> list[str]:
        if self.mode == "lower":
            return [f"(({x}) = 0 and {m} = 0) or (({x}) = 1 and {m} = ({p}))" for x, p, m, _ in self.products]
        # The difference of two products with one factor (two threads' `blockIdx.x * H`) is what
        # a collision compares; a product paired with none gets its own laws.
        out, paired = [], set()
        for i in range(len(self.products)):
            for j in range(i):
                (x1, p1, m1, i1), (x2, _, m2, i2) = self.products[i], self.products[j]
                if i1 == i2:
                    out.append(_sign_laws(f"({x1}) - ({x2})", p1, f"{m1} - {m2}"))
                    paired |= {i, j}
        return out + [_sign_laws(x, p, m) for i, (x, p, m, _) in enumerate(self.products) if i not in paired]


def _sign_laws(x: str, p: str, m: str) -> str:
    """m = x * p, read as what it implies linearly: zero when a factor is, else of the sign of the
    product and at least as large as either factor."""
    return (f"(({x}) = 0 and ({m}) = 0) or (({p}) = 0 and ({m}) = 0) or "
            f"(({x}) >= 1 and ({p}) >= 1 and ({m}) >= ({p}) and ({m}) >= ({x})) or "
            f"(({x}) >= 1 and ({p}) <= -1 and ({m}) <= ({p}) and ({m}) <= -({x})) or "
            f"(({x}) <= -1 and ({p}) >= 1 and ({m}) <= -({p}) and ({m}) <= ({x})) or "
            f"(({x}) <= -1 and ({p}) <= -1 and ({m}) >= -({p}) and ({m}) >= -({x}))")


def _z3_text(e) -> str:
    """A product's factor over the source's names (parameters, extents, constants)."""
    if z3.is_int_value(e):
        return str(e.as_long())
    if e.decl().kind() == z3.Z3_OP_UNINTERPRETED:
        return e.decl().name()
    sym = {z3.Z3_OP_ADD: " + ", z3.Z3_OP_SUB: " - ", z3.Z3_OP_MUL: " * "}.get(e.decl().kind())
    if sym is None:
        raise NotPresburger(f"factor {e}")
    return "(" + sym.join(_z3_text(c) for c in e.children()) + ")"


# ---- printing ----
