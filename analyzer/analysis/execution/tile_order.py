"""Which tile a persistent kernel's work-list walk stands on: `blockIdx.x + c*m`, in every block.

TVM's persistent kernels (prefill and tree attention) walk a list of tiles spread over batches:

    tile = blockIdx.x;  batch = 0;  tiles = F(0);          // before the loop L
    while (batch < n) {                                     // L
        while (tiles <= tile && batch < n) {                // K: find the tile's batch
            tile -= tiles;  batch += 1;
            if (batch < n) tiles = F(batch);
        }
        if (batch < n) { ...work on (batch, tile)...;  tile += c; }
    }

where F(b), batch b's number of tiles, is a function of b alone (read from an index map the kernel
never writes). With P(0) = 0 and P(b+1) = P(b) + F(b), the walk keeps

    H:  P(batch) + tile == blockIdx.x + c*m     (m: the `tile += c` run so far)
    J:  batch < n  implies  tiles == F(batch)

at every point of L. So two blocks standing on the same (batch, tile) have blockIdx.x + c*m1 ==
blockIdx.x' + c*m2, and with at most c blocks along x they are the same block. The symbolic
executor keeps the walk's state as an unknown function per block (symbolic.py, solver.py): without
this fact, a collision between blocks needs only that state to coincide, which nothing excluded.
The fact is P(batch) + tile == I + c*m for each block's state at L's head, K's head and K's exit,
with P one unknown function for all blocks and m a fresh integer; what follows from it is the
solver's to find (nothing, when the grid is wider than c), with `step_lemma` for each pair of the
two blocks' c*m terms, and P in closed form where the sizes telescope (telescope.py).

The module proves H and J from the program, for the loop L and cells `counters(L)` (progress.py)
gives; when one condition fails there is no fact:
1. before L, in L's own statement list: `batch = b0` (a constant), `tile = I` (block indices,
   parameters and constants only) and `tiles = E0`, with nothing between them and L that writes
   the three (or anything E0 reads);
2. in L, outside one inner loop K, batch is never written and every write to tile is `tile += c`,
   one constant c > 0;
3. K's body starts with its guard `if (!G) break` (or K's condition is G) where G has a conjunct
   C(batch); then, with no jump and no other write to the three, `tile -= tiles` and `batch += 1`;
   K has no other jump, and no other write to batch or tile;
4. tiles is written only in 1, and once in K after both of those: `tiles = E(batch)`, straight
   from K's body or under one condition W, with C(batch) implying W (so a skipped write leaves
   J vacuous); E reads only batch, parameters, constants, cells and locals defined before it in
   K, and global buffers the kernel never writes (one value per address: distinct buffers do not
   alias, the stated assumption); and E0 is E at batch = b0 (Z3 proves it, operators other than
   + - * left uninterpreted, which proves more than the real ones need).
Then J holds at L's head (1; L writes tiles only in K) and is kept by K (4); H holds after 1 with
m = 0 and is kept by K's steps (the guard gives C(batch), J gives tiles == F(batch)) and by each
`tile += c` (m + 1). Integers are mathematical, as everywhere in the encoding.
"""

from __future__ import annotations

import dataclasses

import z3

from analyzer import ir
from analyzer.analysis.decision.solver import own_context
from analyzer.analysis.execution.progress import Cell, _cell_written, _increment, _lists, _reads_cell, counters, state_name

_ARITH = {"+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b}
_COMPARE = {"<": lambda a, b: a < b, "<=": lambda a, b: a <= b, ">": lambda a, b: a > b,
            ">=": lambda a, b: a >= b, "==": lambda a, b: a == b, "!=": lambda a, b: a != b}


class _Unfit(Exception):
    """The loop is not the walk this module proves things of."""


def local_value(e, env: dict):
    """The value `env` holds for a local (ir.Var) or a private cell at a constant offset (ir.Read);
    _Unfit when it holds none (shared with walk_witness.py)."""
    if isinstance(e, ir.Var):
        if e.name not in env:
            raise _Unfit(f"local {e.name}")
        return env[e.name]
    acc = e.access
    key = ("cell", acc.buffer, acc.offset.value) if isinstance(acc.offset, ir.Const) else None
    if key not in env:
        raise _Unfit(f"cell {acc.buffer}")
    return env[key]


class Walk:
    """A proven walk: L, its cells, I (IR, block-uniform), c and K."""

    def __init__(self, loop: ir.Loop, batch: Cell, tile: Cell, start: ir.Expr, step: int, inner: ir.Loop):
        self.loop, self.batch, self.tile, self.start, self.step, self.inner = loop, batch, tile, start, step, inner

    def names(self) -> dict[str, tuple[tuple[str, int], str]]:
        """Solver name of each cell's value -> (point, "batch" or "tile")."""
        out = {}
        for point in (("L", self.loop.id), ("L", self.inner.id), ("exit", self.inner.id)):
            for role, cell in (("batch", self.batch), ("tile", self.tile)):
                out[state_name(cell, point[1], point[0])] = (point, role)
        return out


# ---------- IR expressions as Z3 terms, for the proofs ----------

class _Terms:
    """IR expressions as integers: `batch` a given term, cells and locals from an environment,
    read-only global loads one unknown function per buffer and type, operators beyond + - *
    and comparisons unknown functions (equal arguments, equal results: all a proof here needs)."""

    def __init__(self, kernel: ir.Kernel):
        self.read_only = {b for b, site in ir.read_only_loads(kernel).items() if site.space in (ir.GLOBAL, ir.CONSTANT)}
        self.funcs: dict = {}

    def func(self, name: str, arity: int):
        f = self.funcs.get((name, arity))
        if f is None:
            f = self.funcs[(name, arity)] = z3.Function(f"tileorder.{name}", *([z3.IntSort()] * arity), z3.IntSort())
        return f

    def term(self, e, env: dict):
        if isinstance(e, ir.Const) and isinstance(e.value, int):
            return z3.IntVal(e.value)
        if isinstance(e, ir.Param):
            return z3.Int(f"tileorder.param.{e.name}")
        if isinstance(e, ir.Var) or (isinstance(e, ir.Read) and e.access.space == ir.PRIVATE):
            return local_value(e, env)
        if isinstance(e, ir.Read):
            acc = e.access
            if acc.buffer not in self.read_only:
                raise _Unfit(f"load of {acc.buffer}")
            return self.func(f"load.{acc.buffer}.{acc.width}.{acc.view}", 1)(self.term(acc.offset, env))
        if isinstance(e, ir.BinOp):
            a, b = self.term(e.a, env), self.term(e.b, env)
            if e.op in _ARITH:
                return _ARITH[e.op](a, b)
            return self.func(f"op{e.op}", 2)(a, b)
        if isinstance(e, ir.UnOp) and e.op == "-":
            return -self.term(e.a, env)
        if isinstance(e, (ir.UnOp, ir.Call, ir.Select)):
            args = [self.term(x, env) for x in ir.operands(e)]
            name = e.op if isinstance(e, ir.UnOp) else e.fn if isinstance(e, ir.Call) else "select"
            return self.func(f"fn{name}", len(args))(*args)
        raise _Unfit(type(e).__name__)

    def run(self, stmts, env: dict, cells: set) -> dict:
        """Straight-line statements into `env` (locals, and private cells at constant offsets). A
        nested statement forgets what it may write; a jump, or a nested write to `cells` (the
        walk's own), is unfit."""
        for s in stmts:
            if isinstance(s, (ir.Break, ir.Continue, ir.Return)):
                raise _Unfit("a jump")
            if isinstance(s, (ir.If, ir.Loop)):
                for lst in _lists([s]):
                    for x in lst:
                        if (w := _cell_written(x)) is not None:
                            if _touches(w, cells):
                                raise _Unfit("a nested write to the walk's cells")
                            _forget(env, w)
                continue
            w = _cell_written(s)
            if w is None:
                continue
            if w[0] == "buffer":
                if _touches(w, cells):
                    raise _Unfit("a write to the walk's buffer at an unknown offset")
                _forget(env, w)
                continue
            key = w[1] if w[0] == "var" else w
            try:
                env[key] = self.term(s.value if isinstance(s, ir.Assign) else s.access.value, env)
            except _Unfit:
                env.pop(key, None)
        return env

    def truth(self, e, env: dict):
        """A condition as a Z3 Boolean: && || ! and comparisons interpreted, the rest != 0."""
        if isinstance(e, ir.BinOp) and e.op in ("&&", "||"):
            a, b = self.truth(e.a, env), self.truth(e.b, env)
            return z3.And(a, b) if e.op == "&&" else z3.Or(a, b)
        if isinstance(e, ir.UnOp) and e.op == "!":
            return z3.Not(self.truth(e.a, env))
        if isinstance(e, ir.BinOp) and e.op in _COMPARE:
            return _COMPARE[e.op](self.term(e.a, env), self.term(e.b, env))
        return self.term(e, env) != 0


def _touches(w: Cell, cells) -> bool:
    """Does a write to `w` (a cell, or a buffer at an unknown offset) write one of `cells`?"""
    return w in cells or (w[0] == "buffer" and any(c[0] == "cell" and c[1] == w[1] for c in cells))


def _forget(env: dict, w: Cell) -> None:
    if w[0] == "var":
        env.pop(w[1], None)
    elif w[0] == "cell":
        env.pop(w, None)
    else:
        for k in [k for k in env if isinstance(k, tuple) and k[1] == w[1]]:
            env.pop(k)


def _key(cell: Cell):
    return cell[1] if cell[0] == "var" else cell


def _valid(claim) -> bool:
    s = z3.Solver()
    s.set("rlimit", 2_000_000)
    s.add(z3.Not(claim))
    return s.check() == z3.unsat


def _conjuncts(e) -> list:
    if isinstance(e, ir.BinOp) and e.op == "&&":
        return _conjuncts(e.a) + _conjuncts(e.b)
    return [e]


def _uniform_start(e) -> bool:
    """Block indices and extents, parameters and constants only."""
    if isinstance(e, ir.Const | ir.Param):
        return True
    if isinstance(e, ir.Builtin):
        return e.name.startswith(("bid.", "gdim.", "bdim."))
    if isinstance(e, ir.BinOp | ir.UnOp):
        return all(_uniform_start(x) for x in ir.operands(e))
    return False


def _jumps_anywhere(stmts) -> bool:
    return any(isinstance(x, (ir.Break, ir.Continue, ir.Return)) for x in ir.walk_stmts(stmts, into_loops=True))


def _writes_in(stmts) -> list:
    """Every (statement, cell written) inside `stmts`, into branches and loops."""
    return [(x, w) for lst in _lists(stmts) for x in lst if (w := _cell_written(x)) is not None]


def _step(s, tile: Cell) -> int | None:
    """c of `tile = tile + c` (c > 0 a constant)."""
    if not _increment(s, tile):
        return None
    value = s.value if isinstance(s, ir.Assign) else s.access.value
    return value.b.value if isinstance(value.b, ir.Const) else value.a.value


def _decrement_by(s, tile: Cell) -> Cell | None:
    """The cell X of `tile = tile - X`."""
    if _cell_written(s) != tile:
        return None
    value = s.value if isinstance(s, ir.Assign) else s.access.value
    if not (isinstance(value, ir.BinOp) and value.op == "-" and _reads_cell(value.a, tile)):
        return None
    x = value.b
    if isinstance(x, ir.Var):
        return ("var", x.name)
    if isinstance(x, ir.Read) and x.access.space == ir.PRIVATE and isinstance(x.access.offset, ir.Const):
        return ("cell", x.access.buffer, x.access.offset.value)
    return None


# ---------- one shape for the front ends' spellings ----------

def _substitute(e, defs: dict):
    if isinstance(e, ir.Var):
        return defs.get(e.name, e)
    if isinstance(e, ir.BinOp):
        return ir.BinOp(e.op, _substitute(e.a, defs), _substitute(e.b, defs))
    if isinstance(e, ir.UnOp):
        return ir.UnOp(e.op, _substitute(e.a, defs))
    if isinstance(e, ir.Select):
        return ir.Select(_substitute(e.cond, defs), _substitute(e.a, defs), _substitute(e.b, defs))
    if isinstance(e, ir.Call):
        return dataclasses.replace(e, args=tuple(_substitute(a, defs) for a in e.args))
    if isinstance(e, ir.Read):
        off = _substitute(e.access.offset, defs)
        return e if off is e.access.offset else ir.Read(dataclasses.replace(e.access, offset=off))
    return e


def _reads(e, defs: "_Defs | None" = None) -> set:
    """The locals and buffers an expression reads; with `defs`, those of `_substitute(e, defs)`
    without walking the substituted definitions: a local replaced by its definition reads what
    the definition reads (`defs.deps`)."""
    # Each shared subterm once: substituted definitions make DAGs whose trees are far larger.
    out, stack, seen = set(), [(e, defs)], set()
    while stack:
        x, d = stack.pop()
        if (id(x), d is None) in seen:
            continue
        seen.add((id(x), d is None))
        if isinstance(x, ir.Var):
            out |= d.deps[x.name] if d is not None and x.name in d else {x.name}
        elif isinstance(x, ir.Read):
            out.add(("buffer", x.access.buffer))
            stack.append((x.access.offset, d))
        else:
            # Substitution goes on only below the nodes `_substitute` descends into.
            inner = d if isinstance(x, (ir.BinOp, ir.UnOp, ir.Select, ir.Call)) else None
            stack.extend((k, inner) for k in ir.operands(x))
    return out


def _written(stmts) -> set:
    out = set()
    for _, w in _writes_in(stmts):
        out.add(w[1] if w[0] == "var" else ("buffer", w[1]))
    return out


class _Defs(dict):
    """Local -> its definition, with what each definition reads (computed once, not per drop), and
    the other way round, what reads each name: a drop touches the definitions it drops, not every
    definition (an unrolled matmul body has thousands)."""

    def __init__(self, outer: "_Defs | None" = None):
        super().__init__(outer or {})
        self.deps = dict(outer.deps) if outer else {}
        self.readers = {n: set(r) for n, r in outer.readers.items()} if outer else {}

    def define(self, name, value, deps: set) -> None:
        """`name = value`, with `deps` what value reads."""
        self.drop({name})
        if name not in deps:
            self[name] = value
            self.deps[name] = deps
            for d in deps:
                self.readers.setdefault(d, set()).add(name)

    def drop(self, names: set) -> None:
        gone = {n for n in names if n in self} | {k for n in names for k in self.readers.get(n, ())}
        for k in gone:
            for d in self.deps[k]:
                self.readers[d].discard(k)
            del self[k], self.deps[k]


def _normalized(stmts: list, outer: _Defs | None = None) -> list:
    """The statements with each local read replaced by its definition where nothing it reads was
    written since (so the value is the same), and `if (A) v = B; else v = A;` (a short-circuit
    `&&`, as the SPIR-V front end spells it) as `v = A && B`. The same program: only its
    spelling changes, so what is proven of it holds of the kernel. `outer`: the definitions
    standing where `stmts` start."""
    defs = _Defs(outer)
    out = []
    for s in stmts:
        if isinstance(s, ir.Assign):
            value = _substitute(s.value, defs)
            defs.define(s.target, value, _reads(s.value, defs))
            out.append(ir.Assign(s.target, value, s.span))
        elif isinstance(s, ir.MemOp):
            acc = s.access
            new = dataclasses.replace(acc, offset=_substitute(acc.offset, defs),
                                      value=_substitute(acc.value, defs) if acc.value is not None else None)
            if acc.is_write:
                defs.drop({("buffer", acc.buffer)})
            out.append(ir.MemOp(new))
        elif isinstance(s, ir.If):
            cond = _substitute(s.cond, defs)
            then, orelse = s.then, s.orelse
            if (len(then) == 1 == len(orelse) and all(isinstance(x, ir.Assign) for x in then + orelse)
                    and then[0].target == orelse[0].target
                    and _substitute(orelse[0].value, defs) == cond):
                merged = ir.Assign(then[0].target, ir.BinOp("&&", cond, _substitute(then[0].value, defs)), s.span)
                defs.define(merged.target, merged.value,
                            _reads(s.cond, defs) | _reads(then[0].value, defs))
                out.append(merged)
                continue
            new_then, new_else = _normalized(then, defs), _normalized(orelse, defs)
            defs.drop(_written(then + orelse))
            out.append(ir.If(cond, new_then, new_else, s.span))
        elif isinstance(s, ir.Loop):
            defs.drop(_written(s.init + s.body + s.update))
            cond = s.cond
            if isinstance(cond, ir.Const) and cond.value:
                cond = None
            out.append(dataclasses.replace(s, init=_normalized(s.init), cond=cond,
                                           body=_normalized(s.body), update=_normalized(s.update)))
        else:
            out.append(s)
    return out


# The last kernel's normalized statement lists, with the kernel and its body (walk_witness.py asks
# again for the statements the walks name).
@ir.per_kernel
def _normal_lists(kernel: ir.Kernel) -> list:
    return list(_lists(_normalized(kernel.body)))


@ir.per_kernel
def find_walks(kernel: ir.Kernel) -> list[Walk]:
    """The loops of the kernel that are proven walks (in the kernel's normalized spelling). Once
    per kernel, for the block and grid passes alike: the proofs' terms live in a Z3 context of
    their own, which no pass's queries see (a pass's models, and so its witnesses, depend on
    every term its context has seen); a Walk holds IR only."""
    walks = []
    with own_context():
        terms = _Terms(kernel)
        for lst in _normal_lists(kernel):
            for i, s in enumerate(lst):
                if isinstance(s, ir.Loop):
                    try:
                        walks.append(_prove(kernel, terms, lst[:i], s))
                    except _Unfit:
                        pass
    return walks


def _prove(kernel: ir.Kernel, terms: _Terms, before: list, loop: ir.Loop) -> Walk:
    order = counters(loop)
    if order is None or len(order) != 2:
        raise _Unfit("no two counters")
    batch, tile = order
    if any(_touches(w, set(order)) for _, w in _writes_in(loop.init)):
        raise _Unfit("a counter set in L's own init")
    # 2. In L: one inner loop K holds every write to batch; outside it, tile only grows by c.
    inner = [k for k in ir.walk_stmts(loop.body + loop.update, into_loops=True)
             if isinstance(k, ir.Loop) and any(w == batch for _, w in _writes_in(k.body + k.update))]
    if len(inner) != 1:
        raise _Unfit("not one inner loop moving the batch")
    k_loop = inner[0]
    if k_loop.init:
        raise _Unfit("K has an init")
    in_k = {id(x) for x, _ in _writes_in(k_loop.body + k_loop.update)}
    steps = set()
    for x, w in _writes_in(loop.body + loop.update):
        if id(x) in in_k:
            continue
        if _touches(w, {batch}):
            raise _Unfit("batch written outside K")
        if _touches(w, {tile}):
            c = _step(x, tile)
            if c is None:
                raise _Unfit("tile written outside K other than by a constant step")
            steps.add(c)
    if len(steps) != 1:
        raise _Unfit("not one step")
    (c,) = steps
    # 3. K: its guard, then `tile -= X` and `batch += 1` with nothing in between that jumps.
    body = k_loop.body
    # Locals the guard is computed into come first (as the SPIR-V front end spells it).
    g = next((i for i, x in enumerate(body) if not isinstance(x, ir.Assign)), len(body))
    if any(_touches(("var", x.target), set(order)) for x in body[:g]):
        raise _Unfit("a counter set before K's guard")
    if k_loop.cond is not None:
        guard, start = _conjuncts(k_loop.cond), 0
    elif (g < len(body) and isinstance(body[g], ir.If) and len(body[g].then) == 1
          and isinstance(body[g].then[0], ir.Break) and not body[g].orelse
          and isinstance(body[g].cond, ir.UnOp) and body[g].cond.op == "!"):
        guard, start = _conjuncts(body[g].cond.a), g + 1
    else:
        raise _Unfit("K has no guard")
    size = dec_at = inc_at = None
    for i in range(start, len(body)):
        s = body[i]
        if dec_at is None and (x := _decrement_by(s, tile)) is not None:
            size, dec_at = x, i
        elif inc_at is None and _increment(s, batch) and _step(s, batch) == 1:
            inc_at = i
        if dec_at is not None and inc_at is not None:
            break
    if dec_at is None or inc_at is None or size in (batch, tile):
        raise _Unfit("K does not step the walk")
    cells = {batch, tile, size}
    between = [s for i, s in enumerate(body[start:max(dec_at, inc_at)], start) if i not in (dec_at, inc_at)]
    if _jumps_anywhere(between) or any(_touches(w, cells) for _, w in _writes_in(between)):
        raise _Unfit("K does more before its step")
    rest = body[max(dec_at, inc_at) + 1:]
    if _jumps_anywhere(rest) or _jumps_anywhere(k_loop.update) \
            or any(_touches(w, cells) for _, w in _writes_in(k_loop.update)) \
            or any(_touches(w, {batch, tile}) for _, w in _writes_in(rest)):
        raise _Unfit("K does more than its step")
    # 4. The one write of X in K, after the step: E(batch), under W.
    writes_x = [(x, w) for x, w in _writes_in(rest) if _touches(w, {size})]
    if len(writes_x) != 1 or writes_x[0][1] != size:
        raise _Unfit("not one write of the batch's size")
    write = writes_x[0][0]
    b = z3.Int("tileorder.batch")
    env = {_key(batch): b}
    cond = z3.BoolVal(True)
    for i, s in enumerate(rest):
        if s is write:
            prefix = rest[:i]
            break
        if isinstance(s, ir.If) and any(x is write for lst in _lists(s.then) for x in lst):
            if any(x is write for x in s.then):
                prefix = rest[:i]
                terms.run(prefix, env, cells)
                cond = terms.truth(s.cond, env)
                prefix = s.then[:s.then.index(write)]
                break
            raise _Unfit("the size written deeper than one condition")
        if any(x is write for lst in _lists([s]) for x in lst):
            raise _Unfit("the size written inside another statement")
    terms.run(prefix, env, cells)
    value = write.value if isinstance(write, ir.Assign) else write.access.value
    size_of = terms.term(value, env)              # F(batch), batch after the step
    at_guard = [g for g in guard if _reads_only(g, batch)]
    held = z3.And(*[terms.truth(g, {_key(batch): b}) for g in at_guard]) if at_guard else z3.BoolVal(True)
    if not _valid(z3.Implies(held, cond)):
        raise _Unfit("a skipped write of the size does not end the walk")
    # 1. Before L: batch = b0, tile = I, X = F(b0); X written nowhere else.
    top_tile = [s for s in before if _cell_written(s) == tile]
    if not top_tile:
        raise _Unfit("tile not set before L")
    start_value = top_tile[-1].value if isinstance(top_tile[-1], ir.Assign) else top_tile[-1].access.value
    if not _uniform_start(start_value):
        raise _Unfit("tile starts from something other than block indices and parameters")
    init = terms.run(before, {}, cells)
    b0 = z3.simplify(init[_key(batch)]) if _key(batch) in init else None
    if b0 is None or not z3.is_int_value(b0) or _key(size) not in init:
        raise _Unfit("batch or size not set before L")
    if not _valid(init[_key(size)] == z3.substitute(size_of, (b, b0))):
        raise _Unfit("the size before L is not the size of the first batch")
    if any(_touches(w, {size}) and x is not write for x, w in _writes_in(loop.body + loop.update)) \
            or any(_touches(w, cells) for _, w in _writes_in(loop.init)):
        raise _Unfit("the size written elsewhere in L, or a cell in L's own init")
    return Walk(loop, batch, tile, start_value, c, k_loop)


def _reads_only(e, batch: Cell) -> bool:
    """Does the condition read batch and otherwise only parameters and constants?"""
    found = False
    stack = [e]
    while stack:
        x = stack.pop()
        if _reads_cell(x, batch):
            found = True
        elif isinstance(x, ir.Read | ir.Var | ir.Builtin | ir.Opaque):
            return False
        else:
            stack.extend(ir.operands(x))
    return found


class TileOrderFacts:
    """Part of `races.PairChecker`: the fact of each proven walk, for the walk state a query
    reads. Uses the checker's `kernel`."""

    def _tile_order_facts(self, enc) -> list:
        walks = getattr(self, "_walks", None)
        if walks is None:
            walks = self._walks = [(w, w.names()) for w in find_walks(self.kernel)]
            self._walk_facts: dict = {}
        if not walks or not enc.last_state:
            enc.closed_forms = []
            return []
        # The facts are a function of the encoder and the state the query reads, in its order:
        # the queries of one pair (its interval shapes, the passes on demand) read the same state,
        # and get the same terms again without building them.
        key = (id(enc), tuple(x.get_id() for x in enc.last_state))
        hit = self._walk_facts.get(key)
        if hit is None:
            hit = self._walk_facts[key] = self._make_tile_order_facts(enc, walks)
        # Where the prefix sums' closed forms may go (telescope.py): they refine a collision only
        # (races.query), and are encoded only then: in every query, or encoded with every query
        # (new terms change Z3's search), they made some too hard for their budget.
        enc.closed_forms = list(hit[1])
        return list(hit[0])

    def _make_tile_order_facts(self, enc, walks) -> tuple[list, list]:
        facts, closed = [], []
        for walk, names in walks:
            seen: dict = {}
            steps: dict[int, list] = {1: [], 2: []}     # each side's c*m terms
            for x in enc.last_state:
                name = x.decl().name()
                side = 1
                if name.endswith(("@b1", "@b2")):
                    name, side = name[:-3], int(name[-1])
                if name in names:
                    point, _ = names[name]
                    seen.setdefault((point, side, tuple(y.get_id() for y in x.children())), (point, side, x.children()))
            for n, (point, side, args) in enumerate(seen.values()):
                suffix = f"@b{side}" if enc.grid else ""
                value = {role: enc.func(state_name(cell, point[1], point[0]) + suffix, len(args))(*args)
                         for role, cell in (("batch", walk.batch), ("tile", walk.tile))}
                prefix = enc.func(f"tileorder.prefix{walk.loop.id}", 1)
                m = z3.Int(f"tileorder.m{walk.loop.id}.{point[0]}{point[1]}.{side}.{n}")
                # Only this: P(b0) == 0 and m >= 0 hold too, but made the prefill kernels' refinement
                # by their index-map contracts too hard for its budget.
                facts.append(prefix(value["batch"]) + value["tile"] == enc.term(walk.start, side) + walk.step * m)
                closed.append((walk, prefix, value["batch"]))
                steps[side].append(walk.step * m)
            facts += [step_lemma(x, y, walk.step) for x in steps[1] for y in steps[2]]
        return facts, closed


def step_lemma(x, y, c: int):
    """For integers m1, m2: x = c*m1 and y = c*m2 are equal or at least c apart. True of integers
    (a nonzero multiple of c is at least c in size), it names the case split the solver must find:
    two blocks' walks on one (batch, tile) have `blockIdx.x1 - blockIdx.x2 == c*(m2 - m1)`, and the
    rational relaxation of that (m2 - m1 == 1/2) kept the group-1 prefill and tree kernels' output
    pairs undecided past their budget (beyond 10x it; with this, a few thousand steps)."""
    return z3.Or(x == y, x - y >= c, y - x >= c)
