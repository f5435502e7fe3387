"""Buffer contracts: what the data a kernel reads guarantees, stated by the user (`--assume`,
`[[tool.kernelrace.assume]]`) or built in for TVM's LLM runtime (analyzer/tvm/corpus.py), and the
facts they add to a pair query.

A loaded value is an uninterpreted function of its load site, offset and iterations
(`load{site}(offset, iterations...)`, solver.py): nothing relates two loads, so an index map may
send two threads to one element. A contract relates the loads of one buffer the query uses:

- `nondecreasing`: along the last axis of a declared shape (TVM's buffers; the whole buffer for a
  pointer or a 1-D buffer), a load at a smaller index never returns a larger value (an indptr, a
  cumulative sum);
- `distinct` (`injective`): along that axis, loads at different indices return different values
  (page ids, slot maps);
- `distinct-except(V)`: as `distinct`, among the values other than the sentinel V (a slot map
  whose -1 marks "not stored");
- `distinct-across(INDPTR)`: values at columns in different segments of INDPTR (segment s is
  columns INDPTR[s] .. INDPTR[s+1]-1), whatever their rows, differ (slots of different sequences);
- `range=LO..HI`: every loaded value lies in [LO, HI]; on a scalar parameter (a name that is no
  buffer of the kernel), the parameter's value does (TVM's `copy_length`, a page's used slots).

A contracted buffer is one the kernel never writes, so every load of it at one offset returns one
value, across sites and iterations; a query that uses a contract also uses that fact for the other
buffers the kernel only reads (it holds for them whatever the data: distinct pointers do not alias).
The pair checker (races.py) asks for these facts only to refine a collision it found, for loads
its addresses and guards read (not those only the stored values read), pairwise (at most
`MAX_LOADS` per buffer: fewer facts only ever mean more findings). `distinct-across` is a fact
about every pair of segments; it is stated only for the segments the query's own INDPTR loads
delimit (a load at s and one the terms show to be at s+1), never quantified.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property

import z3

from analyzer import ir
from analyzer.analysis.execution.events import AccessEvent, Evaluation
from analyzer.analysis.execution.sym import Sym
from analyzer.analysis.execution.term_walks import walk_dag
from analyzer.analysis.pairing.addresses import peel_scale, split, split_rows

PARAM = "param:"      # in_force's name for a scalar parameter a range contract bounds
PROPERTIES = ("nondecreasing", "distinct", "injective", "distinct-except", "distinct-across", "range")
MAX_LOADS = 48        # loads of one buffer related pairwise in one query
MAX_SEGMENTS = 8      # segments (INDPTR load pairs) of one distinct-across contract in one query
_SYNTAX = ("expected [KERNEL/]BUFFER:PROPERTY with PROPERTY nondecreasing, distinct, injective, "
           "distinct-except(VALUE), distinct-across(INDPTR) or range=LO..HI")
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.$]*$")
_CALL = re.compile(r"^([a-z-]+)\((.*)\)$")


@dataclass(frozen=True)
class Contract:
    buffer: str
    prop: str                     # nondecreasing | distinct | distinct-except | distinct-across | range
    lo: int | None = None         # range: LO; distinct-except: the sentinel
    hi: int | None = None
    kernel: str | None = None     # only in this kernel (None: every kernel with the buffer)
    origin: str = "--assume"      # where it was stated: the option, a configuration file, or built in
    segments: str | None = None   # distinct-across: the INDPTR buffer

    def __str__(self) -> str:
        prop = {"range": f"range={self.lo}..{self.hi}", "distinct-except": f"distinct-except({self.lo})",
                "distinct-across": f"distinct-across({self.segments})"}.get(self.prop, self.prop)
        return f"{self.kernel + '/' if self.kernel else ''}{self.buffer}:{prop}"


def parse(text: str, origin: str = "--assume") -> Contract:
    """`[KERNEL/]BUFFER:PROPERTY`; a ValueError with a one-line reason when it is not that."""
    target, sep, prop = text.strip().partition(":")
    kernel, slash, buffer = target.rpartition("/")
    if not sep or not _NAME.match(buffer) or (slash and not _NAME.match(kernel)):
        raise ValueError(f"'{text}': {_SYNTAX}")
    call = _CALL.match(prop.strip())
    if call and call.group(1) in ("distinct-except", "distinct-across"):
        name, arg = call.group(1), call.group(2).strip()
        if name == "distinct-across":
            if not _NAME.match(arg) or arg == buffer:
                raise ValueError(f"'{text}': distinct-across: expected distinct-across(INDPTR) naming another "
                                 f"buffer, got '{arg}'")
            return Contract(buffer, name, None, None, kernel or None, origin, segments=arg)
        try:
            return Contract(buffer, name, int(arg, 0), None, kernel or None, origin)
        except ValueError:
            raise ValueError(f"'{text}': distinct-except: expected distinct-except(VALUE) of an integer, "
                             f"got '{arg}'") from None
    name, eq, value = prop.partition("=")
    if name not in PROPERTIES or (name == "range") != bool(eq) or name in ("distinct-except", "distinct-across"):
        raise ValueError(f"'{text}': unknown property '{prop}' ({_SYNTAX})")
    if name == "range":
        lo, dots, hi = value.partition("..")
        try:
            lo_v, hi_v = int(lo, 0), int(hi, 0)
        except ValueError:
            raise ValueError(f"'{text}': range: expected range=LO..HI of integers, got '{value}'") from None
        if not dots or lo_v > hi_v:
            raise ValueError(f"'{text}': range: expected range=LO..HI with LO <= HI, got '{value}'")
        return Contract(buffer, "range", lo_v, hi_v, kernel or None, origin)
    return Contract(buffer, "distinct" if name == "injective" else name, None, None, kernel or None, origin)


def _buffer_of(kernel: ir.Kernel, name: str) -> str | None:
    """The IR buffer a contract's name means: its name, or the name users know (`display`)."""
    for b in kernel.buffers.values():
        if name in (b.name, b.display) or b.name == f"{name}_ptr":
            return b.name
    return None


def written(ev: Evaluation) -> set[str]:
    return {e.access.buffer for e in ev.accesses.values() if e.access.is_write}


def in_force(contracts, kernel: ir.Kernel, ev: Evaluation) -> tuple[list, list]:
    """(contract, IR buffer) pairs that apply to `kernel`, and (contract, buffer name) pairs of the
    contracts naming a buffer the kernel writes (its contents are then the kernel's, not the
    input's: the caller decides)."""
    out, misused = [], []
    w = written(ev)
    for c in contracts:
        if c.kernel is not None and c.kernel != kernel.name:
            continue
        buf = _buffer_of(kernel, c.buffer)
        seg = _buffer_of(kernel, c.segments) if c.segments else None
        if buf is None and c.prop == "range" and c.buffer in kernel.params:
            out.append((c, PARAM + c.buffer))
            continue
        if buf is None or (c.segments and seg is None):
            continue
        if buf in w or seg in w:
            misused.append((c, c.buffer if buf in w else c.segments))
        else:
            out.append((c, buf))
    return out, misused


class ContractFacts:
    """The facts of the contracts in force on one kernel, for the loads a query uses."""

    def __init__(self, kernel: ir.Kernel, ev: Evaluation, applied: list[tuple[Contract, str]]):
        self.kernel = kernel
        self.ev = ev
        self.by_buffer: dict[str, list[Contract]] = {}
        for c, buf in applied:
            self.by_buffer.setdefault(buf, []).append(c)
        # The scalar parameters a range contract bounds: only these are looked for in a query.
        self._ranged = [b[len(PARAM):] for b in self.by_buffer if b.startswith(PARAM)]
        self.last_used: tuple[str, ...] = ()    # the contracts the last `facts` call stated
        # Two columns of contracted loads whose order the last `facts` call's facts turn on (a
        # case split for a refinement too hard as one query, races.py), or None.
        self.last_split: tuple | None = None
        # The two segments of a distinct-across contract the last `facts` call delimited, as one
        # condition: both threads' columns in the same segment (the case the contract leaves to
        # the kernel's index arithmetic), or None.
        self.last_same = None
        self._segments = {c: _buffer_of(kernel, c.segments) for c, _ in applied if c.segments}
        self._order = {str(c): i for i, (c, _) in enumerate(applied)}   # contracts are named in this order
        self._sites: dict[int, tuple[object, frozenset[int]]] = {}
        self._memo: dict = {}   # (encoder, loads) -> what `facts` said (see there)

    def sites(self, t) -> frozenset[int]:
        """The load sites a term reads (terms are shared DAGs: memoised by identity; iterative,
        as a value may be a deep chain)."""
        return walk_dag(t, self._sites, _own_site, lambda _: True,
                        lambda x, kids: _own_site(x).union(*kids))

    def value_only(self, a: AccessEvent, b: AccessEvent) -> frozenset[int]:
        """Load sites only the stored values of a pair read: facts about them cannot keep the
        accesses apart (only make their values equal), and a value of an attention kernel reads
        dozens of loads, whose pairwise facts would only slow the query."""
        values = set()
        for e in (a, b):
            if e.value is not None:
                values |= self.sites(e.value)
        if not values:
            return frozenset()
        used = set()
        for e in (a, b):
            used |= self.sites(e.offset)
            for g in e.guard:
                used |= self.sites(g)
        return frozenset(values - used)

    @cached_property
    def _read_only(self) -> set[str]:
        return {e.access.buffer for e in self.ev.accesses.values()} - written(self.ev)

    def _load(self, enc, app):
        """(access, offset term, thread) of a load application, None when it is not a scalar load
        of a read-only buffer (a vector load's value is not one element's)."""
        sym, k = enc.loads.get(app.get_id(), (None, 0))
        site = app.decl().name()[4:]
        e = self.ev.accesses.get(int(site)) if site.isdigit() else None
        if sym is None or e is None or e.access.buffer not in self._read_only:
            return None
        if e.access.width != e.access.elem_size:
            return None
        return e.access, sym.args[0], k

    def facts(self, enc, skip: frozenset[int] = frozenset()) -> list:
        """Facts about the loads of the encoder's last query (`enc.last_loads`); `last_used` names
        the contracts they state. Nothing when no load of a contracted buffer is among them."""
        self.last_used, self.last_split, self.last_same = (), None, None
        # Scalar parameters the query reads: their ranges are facts of their own, no terms to build.
        bounded = [(c, enc.shared[n]) for n in enc.params_read(self._ranged) if n in enc.shared
                   for c in self.by_buffer[PARAM + n]] if self._ranged else []
        params = [z3.And(v >= c.lo, v <= c.hi) for c, v in bounded]
        groups: dict[str, list] = {}
        for app in enc.last_loads:
            if skip and app.decl().name()[4:].isdigit() and int(app.decl().name()[4:]) in skip:
                continue
            hit = self._load(enc, app)
            if hit is not None:
                groups.setdefault(hit[0].buffer, []).append((app, hit))
        if not any(b in self.by_buffer for b in groups):
            self._name_used(str(c) for c, _ in bounded)
            return params
        # The row and column terms are new: collect their side constraints, keeping the query's loads.
        loads_seen, state_seen, base_seen = enc.last_loads, enc.last_state, enc.last_base
        enc.collecting()
        # The facts are a function of the encoder and the loads (in their order): the queries of
        # one pair, fast and exact, its interval shapes and refinements, state them again. A hit
        # gives the same terms and the same side constraints (those the terms recorded).
        key = (id(enc), tuple(app.get_id() for loads in groups.values() for app, _ in loads))
        hit = self._memo.get(key)
        if hit is None:
            (out, used), deps = enc.recorded(lambda: self._facts(enc, groups))
            hit = self._memo[key] = (out, deps, tuple(used), self.last_split, self.last_same)
        else:
            enc.depend(hit[1])
        out, _, used, self.last_split, self.last_same = hit
        out = out + enc.needed() + params
        enc.last_loads, enc.last_state, enc.last_base = loads_seen, state_seen, base_seen
        self._name_used([*used, *(str(c) for c, _ in bounded)])
        return out

    def _name_used(self, used) -> None:
        self.last_used = tuple(sorted(dict.fromkeys(used), key=self._order.__getitem__))

    def _facts(self, enc, groups: dict) -> tuple[list, list]:
        """(the facts, the contracts they state) of `facts`, built in `enc`."""
        out, used = [], []
        for buf, loads in groups.items():
            loads = loads[:MAX_LOADS]
            contracts = self.by_buffer.get(buf, [])
            # One value per offset: the buffer is never written while the kernel runs.
            for i, (x, _) in enumerate(loads):
                for y, _ in loads[i + 1:]:
                    out.append(z3.Implies(x.arg(0) == y.arg(0), x == y))
            for c in contracts:
                if c.prop == "distinct-across":
                    across = self._across(enc, c, loads, groups.get(self._segments[c], []))
                    if across:
                        used.append(str(c))
                        out += across
                    continue
                used.append(str(c))
                if c.prop == "range":
                    out += [z3.And(x >= c.lo, x <= c.hi) for x, _ in loads]
                    continue
                keys = [self._row_col(enc, acc, off, k, x) for x, (acc, off, k) in loads]
                if self.last_split is None:
                    self.last_split = self._split(keys)
                for i, (x, _) in enumerate(loads):
                    for j in range(i + 1, len(loads)):
                        y = loads[j][0]
                        (r1, c1, ok1), (r2, c2, ok2) = keys[i], keys[j]
                        same_row = z3.And(ok1, ok2, r1 == r2)
                        if c.prop == "nondecreasing":
                            out.append(z3.Implies(z3.And(same_row, c1 <= c2), x <= y))
                            out.append(z3.Implies(z3.And(same_row, c2 <= c1), y <= x))
                        elif c.prop == "distinct":
                            out.append(z3.Implies(z3.And(same_row, c1 != c2), x != y))
                        else:   # distinct-except: equal values at two columns are the sentinel
                            out.append(z3.Implies(z3.And(same_row, c1 != c2, x != c.lo), x != y))
        return out, used

    @staticmethod
    def _split(keys) -> tuple | None:
        """The first two columns of in-bounds loads whose difference is not a constant: which of
        them is smaller is what an order or distinctness fact turns on."""
        for i, (_, c1, ok1) in enumerate(keys):
            for _, c2, ok2 in keys[i + 1:]:
                if not z3.is_false(z3.simplify(z3.And(ok1, ok2))) and \
                        not z3.is_int_value(z3.simplify(c1 - c2)):
                    return c1, c2
        return None

    def _across(self, enc, c: Contract, loads: list, seg_loads: list) -> list:
        """distinct-across(INDPTR) on the query's loads of the buffer: for each two segments its
        INDPTR loads delimit (a load at column s and one at s+1, the terms show), columns inside
        different segments hold different values. Only these instances of the contract are
        stated: the segments are the kernel's own terms, never a quantified s."""
        seg_keys = [(x, self._row_col(enc, acc, off, k, x, elements=True))
                    for x, (acc, off, k) in seg_loads[:MAX_LOADS]]
        segs = []
        for lo, (r1, c1, ok1) in seg_keys:
            for hi, (r2, c2, ok2) in seg_keys:
                if lo is not hi and z3.is_true(z3.simplify(z3.And(c2 == c1 + 1, r1 == r2))):
                    segs.append((lo, hi, c1, z3.And(ok1, ok2), r1))
        segs = segs[:MAX_SEGMENTS]
        if len(segs) < 2:
            return []
        if len(segs) == 2:
            (_, _, c1, _, r1), (_, _, c2, _, r2) = segs
            self.last_same = z3.And(r1 == r2, c1 == c2)
        keys = [(x, self._row_col(enc, acc, off, k, x, elements=True)) for x, (acc, off, k) in loads]
        # INDPTR delimits segments of the axis: a non-empty one lies inside it.
        last = getattr(self.kernel.buffers.get(loads[0][1][0].buffer), "last_extent", None)
        extent = last if isinstance(last, int) else enc.param(last) if isinstance(last, str) else None
        out = [z3.Implies(z3.And(s[3], s[0] < s[1]), z3.And(s[0] >= 0, s[1] <= extent) if extent is not None
                          else s[0] >= 0) for s in segs]
        for i, (x, (_, cx, okx)) in enumerate(keys):
            for y, (_, cy, oky) in keys[i + 1:]:
                for s in segs:
                    for t in segs:
                        if s is t:
                            continue
                        out.append(z3.Implies(z3.And(okx, oky, s[3], t[3], s[4] == t[4], s[2] != t[2],
                                                     s[0] <= cx, cx < s[1], t[0] <= cy, cy < t[1]), x != y))
        return out

    def _row_col(self, enc, acc: ir.Access, offset, k: int, app, elements: bool = False):
        """(row, column, in bounds) of a load along the buffer's last axis: the row is 0 for a
        pointer or a 1-D buffer; the facts hold only where the column is inside the axis."""
        buf = self.kernel.buffers.get(acc.buffer)
        last = getattr(buf, "last_extent", None) if buf is not None else None
        if last is None and not elements:
            return z3.IntVal(0), app.arg(0), z3.BoolVal(True)   # the offset orders as the index does
        scale, index = peel_scale(offset)
        if scale != acc.elem_size or last == "?":   # "?": an extent the kernel does not receive
            return z3.IntVal(0), z3.IntVal(0), z3.BoolVal(False)   # no facts
        if last is None:    # a pointer: the whole buffer is one row, of elements
            return z3.IntVal(0), enc.term(index, k), z3.BoolVal(True)
        if isinstance(last, int):
            row, col = split_rows(index, last, buf.offset_param)
            c = enc.term(col, k)
            return enc.term(row, k), c, z3.And(c >= 0, c < last)
        parts = split(index, last)
        if parts is None:
            return z3.IntVal(0), z3.IntVal(0), z3.BoolVal(False)
        row, col = parts
        if buf.offset_param:
            col = ir.BinOp("-", col, ir.Param(buf.offset_param))
        c = enc.term(col, k)
        return enc.term(row, k), c, z3.And(c >= 0, c < enc.param(last))


def _own_site(x) -> frozenset[int]:
    """The load site a term is itself (`load17`), if it is one."""
    if isinstance(x, Sym) and x.name.startswith("load") and x.name[4:].isdigit():
        return frozenset((int(x.name[4:]),))
    return frozenset()
