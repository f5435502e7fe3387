"""Loop state that never repeats: lexicographic progress of a persistent kernel's tile counters.

A persistent kernel walks its work list with counters such as `(batch_idx, tile_id)`: an inner
loop moves to the next batch (`tile_id -= batch_tiles; batch_idx += 1`), and each tile ends with
`tile_id += 16`. The symbolic executor keeps such state as an unknown function of the iteration
(symbolic.py), so a collision between two iterations may need the same tile to come back. This
module proves, from the loop's own statements, that it cannot:

1. every write to the first counter `v1` in the loop adds a positive constant to it;
2. every write to the second counter `v2` adds a positive constant, or sits in one statement list
   with such an increment of `v1` and no jump between them (a new batch may reset the tile);
3. from a program point P of the loop body (the exit of an inner loop whose state the addresses
   read), a strict increment of `v1` or `v2` follows in the same iteration on every path: an
   increment later in one of the lists enclosing P, with no jump out before it.

Then `(v1, v2)` at P only grows lexicographically from one iteration to the next, so two
different iterations that reach P hold different values: the fact `PairChecker` adds to a query
whose addresses read that state. Integers are mathematical, as everywhere in the encoding.
Nothing here is assumed: when a condition fails for the loop, no fact is added.
"""

from __future__ import annotations

import z3

from analyzer import ir

Cell = tuple    # ("var", name) or ("cell", buffer, byte offset)


def _cell_written(s) -> Cell | None:
    if isinstance(s, ir.Assign):
        return ("var", s.target)
    if isinstance(s, ir.MemOp) and s.access.is_write and s.access.space == ir.PRIVATE:
        off = s.access.offset
        return ("cell", s.access.buffer, off.value) if isinstance(off, ir.Const) else ("buffer", s.access.buffer)
    return None


def _reads_cell(e, cell: Cell) -> bool:
    if cell[0] == "var":
        return isinstance(e, ir.Var) and e.name == cell[1]
    return (isinstance(e, ir.Read) and e.access.space == ir.PRIVATE and e.access.buffer == cell[1]
            and isinstance(e.access.offset, ir.Const) and e.access.offset.value == cell[2])


def _increment(s, cell: Cell) -> bool:
    """`cell = cell + c` (or `c + cell`) with a constant c > 0."""
    value = s.value if isinstance(s, ir.Assign) else s.access.value if isinstance(s, ir.MemOp) else None
    if _cell_written(s) != cell or not isinstance(value, ir.BinOp) or value.op != "+":
        return False
    a, b = value.a, value.b
    return ((_reads_cell(a, cell) and isinstance(b, ir.Const) and b.value > 0)
            or (_reads_cell(b, cell) and isinstance(a, ir.Const) and a.value > 0))


def _jumps(stmts) -> bool:
    """A break, continue or return that can leave these statements (a nested loop's own break
    and continue stay inside it)."""
    for s in stmts:
        if isinstance(s, (ir.Break, ir.Continue, ir.Return)):
            return True
        if isinstance(s, ir.If) and (_jumps(s.then) or _jumps(s.orelse)):
            return True
        if isinstance(s, ir.Loop) and any(isinstance(x, ir.Return) for x in ir.walk_stmts(s.body + s.update,
                                                                                       into_loops=True)):
            return True
    return False


def _lists(stmts):
    """Every statement list inside `stmts` (into branches and loops), `stmts` first."""
    yield stmts
    for s in stmts:
        if isinstance(s, ir.If):
            yield from _lists(s.then)
            yield from _lists(s.orelse)
        elif isinstance(s, ir.Loop):
            yield from _lists(s.body)
            yield from _lists(s.update)


def _writes(loop: ir.Loop) -> list:
    """(statement, the list holding it, its index) for every write in the loop."""
    out = []
    for lst in list(_lists(loop.body)) + list(_lists(loop.update)):
        for i, s in enumerate(lst):
            if _cell_written(s) is not None:
                out.append((s, lst, i))
    return out


def _only_grows(writes, v1: Cell, v2: Cell | None, increments: dict | None = None) -> bool:
    """`writes` as `counters` makes them, or a `_Writes` of them; `increments`: id(list) -> cell ->
    the indices of the list's increments of that cell (worked out here when not given)."""
    by = writes if isinstance(writes, _Writes) else _Writes(writes)
    # A write to a counter's buffer at an offset we cannot tell apart may be either counter.
    if any(("buffer", c[1]) in by.cells for c in (v1, v2) if c is not None and c[0] == "cell"):
        return False
    if v1 in by.overwritten:
        return False
    if v2 is None:
        return True
    for lst, i in by.plain.get(v2, ()):
        # Allowed next to an increment of v1 in the same list, nothing that jumps between.
        partners = (increments.get(id(lst), {}).get(v1, []) if increments is not None
                    else [j for j, x in enumerate(lst) if _increment(x, v1)])
        if not any(not _jumps(lst[min(i, j) + 1:max(i, j)]) for j in partners):
            return False
    return True


class _Writes:
    """A loop's writes (as `counters` makes them) by the cell they write: every cell written, the
    cells some write sets to other than an increment, and those writes' places. `_only_grows` asks
    of each candidate order only about its two cells (it walked every write: quadratic in a long
    unrolled body's writes, most of a dlight matmul's analysis)."""

    def __init__(self, writes) -> None:
        self.cells = {w for _, _, _, w, _ in writes}
        self.plain: dict = {}
        for _, lst, i, w, inc in writes:
            if not inc:
                self.plain.setdefault(w, []).append((lst, i))
        self.overwritten = set(self.plain)


def _strictly_after(path: list, counters: tuple, loop: ir.Loop) -> bool:
    """On every way from the point after `path[-1]` to the end of the iteration, an increment of
    a counter runs: `path` is [(list, index), ...] from the loop body down to the point."""
    for lst, i in reversed(path):
        rest = lst[i + 1:]
        for j, s in enumerate(rest):
            if any(_increment(s, c) for c in counters):
                return not _jumps(rest[:j])
        if _jumps(rest):
            return False
    return any(_increment(s, c) for s in loop.update for c in counters) and not _jumps(loop.update)


def _candidates(writes) -> list[Cell]:
    """Counters some write of the loop increments."""
    return sorted({w for _, _, _, w, inc in writes if inc}, key=str)


def _points(loop: ir.Loop):
    """(inner loop, path to it) for each loop directly in the body's statement lists (not inside
    another inner loop: its exit value would also depend on that loop's iteration)."""
    def walk(stmts, path):
        for i, s in enumerate(stmts):
            here = path + [(stmts, i)]
            if isinstance(s, ir.Loop):
                yield s, here
            elif isinstance(s, ir.If):
                yield from walk(s.then, here)
                yield from walk(s.orelse, here)
    yield from walk(loop.body, [])


@ir.per_node(4096)
def counters(loop: ir.Loop) -> tuple | None:
    """Counters `(v1, v2)` (or `(v1,)`) of `loop` that only grow lexicographically: conditions 1
    and 2 of the module docstring. Once per loop: each pass of a kernel asks, and the search below
    is quadratic in the cells a long loop writes."""
    # Each write with the cell it writes and whether it increments it, worked out once: every
    # candidate order below reads them.
    writes = [(s, lst, i, w, _increment(s, w)) for s, lst, i in _writes(loop) for w in [_cell_written(s)]]
    increments: dict = {}
    for s, lst, i, w, inc in writes:
        if inc:
            increments.setdefault(id(lst), {}).setdefault(w, []).append(i)
    # A first counter is only ever incremented (a for loop's own counter, reset in the body of the
    # loop around it, is not one of this loop's).
    by = _Writes(writes)
    cands = [c for c in _candidates(writes) if _only_grows(by, c, None)]
    if not cands:
        return None
    written = sorted({w for _, _, _, w, _ in writes if w[0] in ("var", "cell")}, key=str)
    for order in [(a, b) for a in cands for b in written if b != a] + [(c,) for c in cands]:
        if _only_grows(by, order[0], order[1] if len(order) > 1 else None, increments):
            return order
    return None


def _path_to(stmts, access_id: int, held: dict | None = None, path=()):
    """[(list, index), ...] from `stmts` down to the statement holding access `access_id`.
    `held` memoises which access ids each node holds (see `_held`): pass one dict for many walks."""
    held = {} if held is None else held
    for i, s in enumerate(stmts):
        here = path + ((stmts, i),)
        if isinstance(s, ir.If):
            found = _path_to(s.then, access_id, held, here) or _path_to(s.orelse, access_id, held, here)
            if found:
                return found
            if access_id in _held(s.cond, held):
                return list(here)
        elif isinstance(s, ir.Loop):
            found = _path_to(s.body, access_id, held, here) or _path_to(s.update, access_id, held, here)
            if found:
                return found
            if s.cond is not None and access_id in _held(s.cond, held):
                return list(here)
        elif access_id in _held(s, held):
            return list(here)
    return None


def _held(node, memo: dict) -> frozenset:
    """The ids of the accesses inside `node` (a statement, an expression, or a list of them),
    through every field. Memoised by node identity: expressions share subterms, and a walk that
    revisits them grows with the sharing (the memo keeps each node it names alive)."""
    hit = memo.get(id(node))
    if hit is not None:
        return hit[1]
    if isinstance(node, ir.Access):
        out = frozenset((node.id,)) | _held(node.offset, memo) | (
            _held(node.value, memo) if node.value is not None else frozenset())
    elif isinstance(node, (list, tuple)):
        out = frozenset().union(*(_held(x, memo) for x in node))
    else:
        fields = getattr(node, "__dataclass_fields__", None)
        if not fields or isinstance(node, ir.Span):
            return frozenset()
        out = frozenset().union(*(_held(getattr(node, f), memo) for f in fields))
    memo[id(node)] = (node, out)
    return out


def _writes_any(stmts, cells) -> bool:
    """A write to one of `cells`, or to their buffer at an offset that may be theirs."""
    buffers = {("buffer", c[1]) for c in cells if c[0] == "cell"}
    return any((w := _cell_written(s)) in cells or w in buffers for lst in _lists(stmts) for s in lst)


def site_qualifies(loop: ir.Loop, order: tuple, inner: ir.Loop, access_id: int, held: dict | None = None) -> bool:
    """Does the access read the counters as `inner`'s exit left them, and does an increment
    follow it in its iteration? (condition 3, at the access; `held` as for `_path_to`)."""
    site = _path_to(loop.body, access_id, held)
    point = next((path for k, path in _points(loop) if k is inner), None)
    if site is None or point is None:
        return False
    # The inner loop sits in a list the access's path runs through, before the access's branch.
    depth = len(point) - 1
    if depth >= len(site) or any(a[0] is not b[0] or a[1] != b[1] for a, b in zip(point[:-1], site[:depth])):
        return False
    lst, k = point[-1]
    if site[depth][0] is not lst or site[depth][1] <= k:
        return False
    cells = set(order)
    # No counter written between the inner loop's exit and the access: the statements between at
    # that level, those before the access at each level below, and all of any loop around it.
    if _writes_any(lst[k + 1:site[depth][1]], cells):
        return False
    for l2, i2 in site[depth + 1:]:
        if _writes_any(l2[:i2], cells):
            return False
    for l2, i2 in site[depth:-1]:
        s = l2[i2]
        if isinstance(s, ir.Loop) and _writes_any(s.body + s.update, cells):
            return False
    return _strictly_after(site, order, loop)


def site_increments(loop: ir.Loop, order: tuple, access_id: int, held: dict | None = None) -> bool:
    """An increment follows the access in its iteration (condition 3 at the access). With every
    write only growing the counters, the values at the loop head then grow strictly between two
    iterations that run the access: head(n1) <= value at the access < head(n1 + 1) <= head(n2)."""
    site = _path_to(loop.body, access_id, held)
    return site is not None and _strictly_after(site, order, loop)


def exit_points(loop: ir.Loop):
    """The inner loops directly in `loop`'s body lists (where `state_name` values are read)."""
    return [k for k, _ in _points(loop)]


def state_name(cell: Cell, at_exit_of: int, where: str = "exit") -> str:
    """The symbolic executor's name for a counter's value at an inner loop's exit, or (`where`
    "L") at the head of the loop `at_exit_of` (symbolic.py)."""
    if cell[0] == "var":
        return f"{cell[1]}@{where}{at_exit_of}"
    return f"private:{cell[1]}+{cell[2]}@{where}{at_exit_of}"


# The last kernel's points and site verdicts (`ProgressFacts`), with the kernel and its body: the
# block and grid passes share them (a changed kernel is a copy, with a new body).
@ir.per_kernel
def _kernel_shared(kernel: ir.Kernel) -> dict:
    return {"site": {}, "held": {}}


class ProgressFacts:
    """Part of `races.PairChecker`: the facts of this module for the loop state a query reads.
    Uses the checker's `kernel`."""

    def _progress_points(self) -> dict:
        """("exit", inner loop id) -> (the loop around it, its counters, the inner loop), and
        ("L", loop id) -> (the loop, its counters, None): where counters' values are read."""
        points = getattr(self, "_progress", None)
        if points is None:
            shared = _kernel_shared(self.kernel)
            points = self._progress = shared.get("points")
        if points is None:
            points = self._progress = _kernel_shared(self.kernel)["points"] = {}
            for s in ir.walk_stmts(self.kernel.body, into_loops=True):
                if isinstance(s, ir.Loop):
                    order = counters(s)
                    if order:
                        points[("L", s.id)] = (s, order, None)
                        for k in exit_points(s):
                            points[("exit", k.id)] = (s, order, k)
        return points

    def _site_ok(self, where: str, kid: int, access_id: int) -> bool:
        """Condition 3 for an access at a point, once per (point, access): the walk to the access
        is the costly part, and every query of a pair reading the state asks it again."""
        memo = getattr(self, "_site_memo", None)
        if memo is None:
            shared = _kernel_shared(self.kernel)
            memo = self._site_memo = shared["site"]
            self._held_memo: dict = shared["held"]
        key = (where, kid, access_id)
        if key not in memo:
            loop, order, inner = self._progress_points()[(where, kid)]
            memo[key] = (site_increments(loop, order, access_id, self._held_memo) if inner is None
                         else site_qualifies(loop, order, inner, access_id, self._held_memo))
        return memo[key]

    def _progress_facts(self, enc, a, b) -> list:
        points = self._progress_points()
        if not points or not enc.last_state:
            return []
        # A function of the encoder, the state the query reads (in its order) and the two sites:
        # the queries of one pair (its interval shapes, the passes on demand) get the same terms.
        memo = getattr(self, "_progress_memo", None)
        if memo is None:
            memo = self._progress_memo = {}
        key = (id(enc), tuple(x.get_id() for x in enc.last_state), a.access.id, b.access.id)
        hit = memo.get(key)
        if hit is None:
            hit = memo[key] = self._make_progress_facts(enc, a, b, points)
        return list(hit)

    def _make_progress_facts(self, enc, a, b, points) -> list:
        named = getattr(self, "_progress_named", None)
        if named is None:
            # State name -> the points that read it, in the order of `points`.
            named = self._progress_named = {}
            for (where, kid), (loop, order, inner) in points.items():
                for n in dict.fromkeys(state_name(c, kid, where) for c in order):
                    named.setdefault(n, []).append((where, kid))
        by_point: dict = {}
        for x in enc.last_state:
            for point in named.get(x.decl().name(), ()):
                by_point.setdefault(point, {})[tuple(y.get_id() for y in x.children())] = x.children()
        facts = []
        for (where, kid), apps in by_point.items():
            loop, order, inner = points[(where, kid)]
            if not all(self._site_ok(where, kid, e.access.id) for e in (a, b)):
                continue
            args = list(apps.values())
            funcs = [enc.func(state_name(c, kid, where), len(args[0])) for c in order]
            for i, a1 in enumerate(args):
                for a2 in args[i + 1:]:
                    if len(a1) != len(a2) or not a1:
                        continue
                    # The loop's own iteration is the last argument (the point is in no other
                    # inner loop); the other arguments must agree.
                    same = [x == y for x, y in zip(a1[:-1], a2[:-1])]
                    facts.append(z3.Implies(z3.And(*same, a1[-1] != a2[-1]),
                                            z3.Or(*[f(*a1) != f(*a2) for f in funcs])))
        return facts
