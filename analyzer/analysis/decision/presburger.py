"""Z3 constraints as integer sets (ISL, through islpy): the translation the decision layer
(decide.py) and the race conditions (conditions/race_condition.py) share.

What it reads is Presburger arithmetic: integers, `+`, `-`, multiplication by constants, SMT-LIB's
`div` and `mod` by constants (Euclidean: `floor` and the non-negative remainder for a positive
divisor), `If`, and/or/not/implies, comparisons. The encoder (solver.py) already spells C's
semantics out in these terms (values are mathematical integers, C's truncating `/` and `%` are
`If`s over Euclidean ones, shifts by constants are floors and products), so translating its terms
exactly is translating C exactly; anything else (bit vectors, a division by an unknown, a product
of two unknowns) raises `NotPresburger`, and the query goes to Z3.

An uninterpreted application (a loaded value, an opaque call, a function the cheap encoding reads
a product or a bit operation as) is a variable of its own; applications of one function are
related by functional consistency (equal arguments, equal values: Ackermann's reduction, exact)
up to MAX_APPLICATIONS of them, beyond which the translation declines.
"""

from __future__ import annotations

import islpy as isl
import z3

# More uninterpreted applications than this: Ackermann's constraints grow with their square.
MAX_APPLICATIONS = 24
ONE_SHOT_WIDTH = 5_000
MAX_WIDTH = 1_000_000
MAX_PRODUCTS = 6


class NotPresburger(Exception):
    """A constraint outside what the translation reads (bit vectors, a product of two thread values)."""


class Translation:
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
        self.memo: dict = {}     # Z3 id (or a tagged key) -> what it translated to
        self.apps: dict[str, list[tuple[list[str], str]]] = {}
        self.products: list[tuple[str, str, str, int]] = []   # (x, p, m, id of p)
        self.atoms = atoms       # printed product of parameters -> ISL parameter
        self.napps = 0
        self.app_limit = MAX_APPLICATIONS    # per query instead, where the translation serves many (`extras`)
        self.app_terms: list[tuple[object, str]] = []   # (Z3 application, its variable), inner first
        # What the terms being translated introduced (`constraint`): ("v", Z3 name), ("e", existential),
        # ("s", index into side), ("a", index into app_terms); one set per open term.
        self._using: list[set] = []
        self._queried: dict[int, tuple[object, str, frozenset]] = {}   # Z3 id -> (it, text, its items)
        self._app_of: dict[str, tuple[str, list[str]]] = {}              # variable -> (function, arguments)

    def ident(self, name: str) -> str:
        return self.param_idents_by_name[name]

    def _new(self) -> str:
        self.fresh += 1
        self._use(("e", self.fresh))
        return f"e{self.fresh}_"

    def _use(self, item) -> None:
        if self._using:
            self._using[-1].add(item)

    def translate(self, constraints) -> list[str]:
        """The constraints as ISL constraint texts, with those the translation introduced (the
        products' own, which depend on the mode, not included: `_product_laws`)."""
        body = [self.boolean(c) for c in constraints]
        return body + self._ackermann() + self.side

    def constraint(self, c) -> tuple[str, frozenset]:
        """(text, what it introduced) of one constraint, translated once: for a translation kept
        across the queries of one analysis (decide.Decider), each constraint is translated once,
        memoised by its Z3 id with the variables, side constraints and applications it introduced,
        and a query states only those of its own constraints (`extras`)."""
        # By id alone: the memo holds the term, so no other term of its context takes its id.
        hit = self._queried.get(c.get_id())
        if hit is None:
            self._using.append(set())
            try:
                text = self.boolean(c)
            except NotPresburger as exc:
                # Remembered: a query stating it again is declined at once.
                self._queried[c.get_id()] = (c, None, exc)
                raise
            finally:
                used = self._using.pop()
            hit = self._queried[c.get_id()] = (c, text, frozenset(used))
        if hit[1] is None:
            raise hit[2]
        return hit[1], hit[2]

    def extras(self, items) -> tuple[list[str], list[tuple[object, str]]]:
        """(side and Ackermann constraints, applications) that the constraints which introduced
        `items` need."""
        apps = sorted(i for k, i in items if k == "a")
        if len(apps) > MAX_APPLICATIONS:
            raise NotPresburger("too many uninterpreted values")
        by_fn: dict[str, list] = {}
        for i in apps:
            _, v = self.app_terms[i]
            fn, args = self._app_of[v]
            by_fn.setdefault(fn, []).append((args, v))
        sides = [self.side[i] for i in sorted(i for k, i in items if k == "s")]
        return sides + _ackermann(by_fn), [self.app_terms[i] for i in apps]

    def dims(self) -> list[str]:
        """The set's variables: the Z3 constants' (`vars`), then the existentials introduced."""
        return list(self.vars.values()) + [f"e{i}_" for i in range(1, self.fresh + 1)]

    @staticmethod
    def width(body: list[str]) -> int:
        """The disjuncts the normal form of `body` may have, at most."""
        width = 1
        for b in body:
            width *= b.count(" or ") + 1
        return width

    def projected(self, ctx, head: str, body: list[str]) -> isl.Set:
        """The set of `body` (see `translate`) projected onto the parameters."""
        return self.as_set(ctx, head, body).params()

    def as_set(self, ctx, head: str, body: list[str], dims: list[str] | None = None) -> isl.Set:
        """The set of `body` over `dims` (default `dims()`), the parameters named in `head` ("" for none)."""
        tup = "[" + ", ".join(self.dims() if dims is None else dims) + "]"
        # The disjuncts its normal form may have, at most: over the limit, not tried (the cost of
        # a projection follows it; measured on the fixtures, those under it take at most 0.3 s).
        width = self.width(body)
        if width <= ONE_SHOT_WIDTH:
            inner = " and ".join(f"({b})" for b in body) or "true"
            return isl.Set.read_from_str(ctx, head + "{ " + tup + " : " + inner + " }")
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
            if acc.plain_is_empty():
                break
        return acc

    # ---- booleans ----

    def boolean(self, e, negate: bool = False) -> str:
        # Memoised like `term`: the encoder shares subterms, and a Boolean `=` or `If` reads its
        # operands twice, so an unmemoised walk is exponential in their nesting.
        return self._memoised(("b", e.get_id(), negate), lambda: self._boolean(e, negate))

    def _memoised(self, key, translate) -> str:
        """translate()'s text, once per key, with what it introduced (`_using`) remembered and
        passed on to the term being translated around it."""
        hit = self.memo.get(key)
        if hit is None:
            self._using.append(set())
            try:
                text = translate()
            finally:
                used = self._using.pop()
            hit = self.memo[key] = (text, frozenset(used))
        if self._using:
            self._using[-1] |= hit[1]
        return hit[0]

    def _boolean(self, e, negate: bool) -> str:
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

    def _folded(self, e) -> int | None:
        key = ("f", e.get_id())
        if key not in self.memo:
            self.memo[key] = _fold(e)
        return self.memo[key]

    def _compare(self, op: str, a, b) -> str:
        ca, cb = self._folded(a), self._folded(b)
        if ca is not None and cb is not None:   # `1 != 0`: no disjunction for a constant
            holds = {"=": ca == cb, "!=": ca != cb, "<": ca < cb, "<=": ca <= cb, ">": ca > cb, ">=": ca >= cb}[op]
            return "true" if holds else "false"
        x, y = self.term(a), self.term(b)
        if op == "!=":
            return f"({x}) < ({y}) or ({x}) > ({y})"
        return f"({x}) {op} ({y})"

    # ---- integer terms ----

    def term(self, e) -> str:
        return self._memoised(e.get_id(), lambda: self._term(e))

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
                self._use(("v", name))
                return self.vars[name]
            return self._application(e, name, kids)
        if k == z3.Z3_OP_ADD:
            return " + ".join(f"({self.term(c)})" for c in kids)
        if k == z3.Z3_OP_SUB:
            return " - ".join(f"({self.term(c)})" for c in kids)
        if k == z3.Z3_OP_UMINUS:
            return f"-({self.term(kids[0])})"
        if k == z3.Z3_OP_MUL:
            # Constant factors (`t.z*32*4` has the product 32*4 as one) multiply out.
            folded = [self._folded(c) for c in kids]
            rest = [c for c, f in zip(kids, folded) if f is None]
            factor = 1
            for f in folded:
                factor *= 1 if f is None else f
            if not rest:
                return str(factor)
            out = self.term(rest[0]) if len(rest) == 1 else self._product(rest)
            return f"{factor} * ({out})" if factor != 1 else out
        if k in (z3.Z3_OP_IDIV, z3.Z3_OP_MOD):
            a, b = kids
            c = self._folded(b)
            if not c:
                raise NotPresburger("division by a value")
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
            self._use(("s", len(self.side) - 1))
            return v
        raise NotPresburger(f"operation {e.decl().name()}")

    def _application(self, e, name: str, kids) -> str:
        """An uninterpreted function's value: an existential, equal to every other application of
        the function with equal arguments (`_ackermann`)."""
        self.napps += 1
        if self.napps > self.app_limit:
            raise NotPresburger("too many uninterpreted values")
        args = [self.term(c) for c in kids]
        v = self._new()
        self.apps.setdefault(name, []).append((args, v))
        self.app_terms.append((e, v))
        self._app_of[v] = (name, args)
        self._use(("a", len(self.app_terms) - 1))
        return v

    def _ackermann(self) -> list[str]:
        return _ackermann(self.apps)

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


def _fold(e) -> int | None:
    """The value of a term of constants and `+ - *`, else None."""
    if z3.is_int_value(e):
        return e.as_long()
    if not z3.is_app(e) or e.num_args() == 0:
        return None
    k = e.decl().kind()
    if k not in (z3.Z3_OP_ADD, z3.Z3_OP_SUB, z3.Z3_OP_MUL, z3.Z3_OP_UMINUS):
        return None
    vals = []
    for c in e.children():
        v = _fold(c)
        if v is None:
            return None
        vals.append(v)
    if k == z3.Z3_OP_UMINUS:
        return -vals[0]
    out = vals[0]
    for v in vals[1:]:
        out = out + v if k == z3.Z3_OP_ADD else out - v if k == z3.Z3_OP_SUB else out * v
    return out


def _ackermann(apps: dict[str, list[tuple[list[str], str]]]) -> list[str]:
    """Functional consistency of the applications (function -> [(arguments, variable)]): equal
    arguments, equal values."""
    out = []
    for calls in apps.values():
        for i in range(len(calls)):
            for j in range(i):
                (a1, v1), (a2, v2) = calls[i], calls[j]
                if a1 == a2:
                    out.append(f"{v1} = {v2}")
                    continue
                differ = " or ".join(f"({x}) < ({y}) or ({x}) > ({y})" for x, y in zip(a1, a2))
                out.append(f"{differ} or {v1} = {v2}")
    return out


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
