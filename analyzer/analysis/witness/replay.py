"""Concrete execution of one thread over the kernel IR: the replay a witness must survive.

A witness says two threads of a block (or of two blocks), in given loop iterations, touch the same bytes with no
barrier between them. The replay runs each thread's program on concrete numbers (parameters,
launch extents, thread and block indices, every index and guard on the way) and records the
instances of the accesses asked about, each with its byte offset, its iterations and the
barriers the thread passed before it. What the analysis keeps uninterpreted (loaded values,
float arithmetic, values a front end cannot express) is asked of `unknown`, which answers as the
solver's model does, so the replay and the query agree on everything but the program itself.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from analyzer import ir
from analyzer.analysis.decision.memory_guard import checkpoint
from analyzer.analysis.execution.float_constants import folded

# Statements one thread may execute before the replay gives up (a witness in a long loop).
STEP_LIMIT = 50_000

# unknown(name, args, thread) -> int: the value of an uninterpreted function (names as the
# solver's: `load17`, `opaque3`, `undef:x`, `f*`, ...), for thread 1 or 2 (0: the same in both).
Unknown = Callable[[str, tuple, int], int]


class ReplayError(Exception):
    """The program cannot be run on these values (a division by zero, a step limit)."""


@dataclass(frozen=True)
class Instance:
    access: int                     # access id
    offset: int                     # byte offset
    width: int
    iterations: tuple               # ((loop id, iteration), ...) of the enclosing loops, outermost first
    barriers: tuple                 # (block barriers, warp barriers) passed before it
    ordered: tuple                  # per memory space: (space, block barriers ordering it, warp ones)
    value: int | None = None        # the value stored, for writes
    grid_syncs: int = 0             # grid syncs passed before it (they order two blocks)

    def passed(self, space: str | None) -> tuple[int, int]:
        """Barriers passed before this instance: all of them, or those ordering `space`."""
        if space is None:
            return self.barriers
        return dict((s, (b, w)) for s, b, w in self.ordered).get(space, (0, 0))


@dataclass
class Launch:
    params: dict[str, int]
    block_dim: dict[str, int]
    grid_dim: dict[str, int]
    warp_size: int = 32


class _Break(Exception):
    pass


class _Continue(Exception):
    pass


class _Return(Exception):
    pass


class _Reached(Exception):
    """The instance asked for ran: the rest of the thread does not matter."""


@dataclass
class _Thread:
    tid: dict[str, int]
    bid: dict[str, int]
    k: int                                   # 1 or 2: which thread of the witness
    env: dict = field(default_factory=dict)
    private: dict = field(default_factory=dict)   # (buffer, byte offset) -> (width, value)
    loops: list = field(default_factory=list)     # [[loop id, iteration], ...]
    block_barriers: int = 0
    warp_barriers: int = 0
    grid_syncs: int = 0
    ordered: dict = field(default_factory=dict)   # space -> [block, warp] barriers ordering it
    steps: int = 0


class Replay:
    """Runs threads of one kernel on concrete values; `watch` names the access ids to record."""

    def __init__(self, kernel: ir.Kernel, launch: Launch, unknown: Unknown, watch: set[int],
                 read_only: dict[str, ir.Access] | None = None):
        self.kernel = kernel
        self.launch = launch
        self.unknown = unknown
        self.watch = watch
        # `ir.read_only_loads(kernel)`, which a caller replaying many witnesses computes once.
        self.read_only = ir.read_only_loads(kernel) if read_only is None else read_only
        self._quiet = False       # evaluating again what an access evaluated: record nothing

    def run(self, tid: tuple[int, int, int], bid: tuple[int, int, int], k: int,
            until: tuple | None = None) -> list[Instance]:
        """Every instance of the watched accesses that thread `tid` of block `bid` executes, up
        to the one `until` names (access id, iterations) if it is given."""
        t = _Thread(dict(zip("xyz", tid)), dict(zip("xyz", bid)), k)
        self.out: list[Instance] = []
        self.until = until
        self._values: dict[int, object] = {}
        try:
            self._block(self.kernel.body, t)
        except (_Return, _Reached):
            pass
        except (_Break, _Continue):
            raise ReplayError("a break or continue outside every loop") from None
        return self.out

    # ---------- statements ----------

    def _block(self, stmts, t: _Thread) -> None:
        for s in stmts:
            self._stmt(s, t)

    def _stmt(self, s, t: _Thread) -> None:
        checkpoint()
        # Values are memoised per statement (see `_eval`): the state they read changes only
        # between statements.
        self._values.clear()
        t.steps += 1
        if t.steps > STEP_LIMIT:
            raise ReplayError(f"more than {STEP_LIMIT:,} statements in one thread")
        if isinstance(s, ir.Assign):
            t.env[s.target] = self._eval(s.value, t)
        elif isinstance(s, ir.MemOp):
            acc = s.access
            offset = self._int(acc.offset, t)
            value = self._eval(acc.value, t) if acc.value is not None else None
            if acc.space == ir.PRIVATE:
                self._store_private(acc, offset, value, t)
            else:
                self._record(acc, offset, value, t)
        elif isinstance(s, ir.Eval):
            self._eval(s.value, t)
        elif isinstance(s, ir.Barrier):
            scope = 1 if s.scope == ir.WARP else 0   # a grid sync is a block barrier too
            t.grid_syncs += s.scope == ir.GRID
            if scope == 0:
                t.block_barriers += 1
            else:
                t.warp_barriers += 1
            for space in s.spaces:
                t.ordered.setdefault(space, [0, 0])[scope] += 1
        elif isinstance(s, ir.If):
            self._block(s.then if self._int(s.cond, t) else s.orelse, t)
        elif isinstance(s, ir.Loop):
            self._loop(s, t)
        elif isinstance(s, ir.Break):
            raise _Break
        elif isinstance(s, ir.Continue):
            raise _Continue
        elif isinstance(s, ir.Return):
            raise _Return
        else:
            raise ReplayError(f"unknown statement {type(s).__name__}")

    def _loop(self, s: ir.Loop, t: _Thread) -> None:
        self._block(s.init, t)
        frame = [s.id, 0]
        t.loops.append(frame)
        try:
            while s.cond is None or (self._values.clear() or self._int(s.cond, t)):
                try:
                    self._block(s.body, t)
                except _Continue:
                    pass
                self._block(s.update, t)
                frame[1] += 1
                t.steps += 1
                if t.steps > STEP_LIMIT:
                    raise ReplayError(f"more than {STEP_LIMIT:,} statements in one thread")
        except _Break:
            pass
        finally:
            t.loops.pop()

    def _record(self, acc: ir.Access, offset: int, value, t: _Thread) -> None:
        if acc.id not in self.watch or acc.space == ir.CONSTANT or self._quiet:
            return
        inst = Instance(acc.id, offset, acc.width, tuple((lid, n) for lid, n in t.loops),
                        (t.block_barriers, t.warp_barriers),
                        tuple(sorted((sp, b, w) for sp, (b, w) in t.ordered.items())), value, t.grid_syncs)
        self.out.append(inst)
        if self.until == (acc.id, tuple(sorted(inst.iterations))):
            raise _Reached

    def _store_private(self, acc: ir.Access, offset: int, value, t: _Thread) -> None:
        lo, hi = offset, offset + acc.width
        for key in [key for key, (w, _) in t.private.items() if key[0] == acc.buffer and key[1] < hi and lo < key[1] + w]:
            del t.private[key]
        t.private[(acc.buffer, offset)] = (acc.width, value)
        comps = getattr(value, "comps", None)
        if comps is not None and acc.width > acc.elem_size:
            for i, c in enumerate(comps):
                t.private[(acc.buffer, offset + i * acc.elem_size)] = (acc.elem_size, c)

    # ---------- expressions ----------

    def _iters(self, t: _Thread) -> tuple:
        return tuple(n for _, n in t.loops)

    def _eval(self, e, t: _Thread):
        """The value of `e`: an int, or a `_Lazy` uninterpreted value, asked of the model only
        where an index, a guard or a comparison needs it (float arithmetic mostly never is).
        Expressions share subterms (a value the source names again is one object): within one
        statement, or one test of a loop's condition, each is evaluated once. A read evaluated
        again would only record its instance a second time."""
        if isinstance(e, (ir.BinOp, ir.UnOp, ir.Select, ir.Call, ir.Read)):
            hit = self._values.get(id(e), _MISSING)
            if hit is _MISSING:
                hit = self._values[id(e)] = self._compute(e, t)
            return hit
        return self._compute(e, t)

    def _compute(self, e, t: _Thread):
        if isinstance(e, ir.Const):
            return e.value
        if isinstance(e, ir.Var):
            if e.name in t.env:
                return t.env[e.name]
            return _Lazy(self, f"undef:{e.name}", (), t.k)
        if isinstance(e, ir.Param):
            if e.name not in self.launch.params:
                raise ReplayError(f"no value for parameter {e.name}")
            return self.launch.params[e.name]
        if isinstance(e, ir.Builtin):
            return self._builtin(e.name, t)
        if isinstance(e, ir.BinOp):
            if e.op in ("&&", "||"):
                a = self._int(e.a, t)
                if (e.op == "&&") != bool(a):
                    return int(bool(a))
                return int(bool(self._int(e.b, t)))
            return _binop(e.op, self._int(e.a, t), self._int(e.b, t))
        if isinstance(e, ir.UnOp):
            a = self._int(e.a, t)
            return {"-": lambda: -a, "!": lambda: int(not a), "~": lambda: ~a}[e.op]()
        if isinstance(e, ir.Select):
            return self._eval(e.a, t) if self._int(e.cond, t) else self._eval(e.b, t)
        if isinstance(e, ir.Call):
            if e.fn in ir.BIT_INTRINSICS and len(e.args) == 1:
                return ir.bit_intrinsic(e.fn, self._int(e.args[0], t))
            if (e.fn.startswith("fcmp") or e.fn in ("min", "max")) and len(e.args) == 2:
                a, b = (self._int(x, t) for x in e.args)
                return _binop(e.fn[4:], a, b) if e.fn.startswith("fcmp") else (min if e.fn == "min" else max)(a, b)
            if (name := folded(e, self.kernel.lang)) is not None:   # as the solver names it
                return _Lazy(self, name, (), 0)
            args = tuple(self._eval(a, t) for a in e.args)
            return _Lazy(self, e.fn, args, 0, comps=args if e.fn == "vec" else None)
        if isinstance(e, ir.Read):
            return self._read(e.access, t)
        if isinstance(e, ir.Opaque):
            if e.source is not None:   # a value of the source thread, the same for every reader
                return _Lazy(self, f"opaque{e.site}", (self._int(e.source, t),) + self._iters(t), 0)
            if ir.loaded_unchanged(self.kernel, e):   # as the solver names it (symbolic.py)
                return self._loaded(e.fetch, self._int(e.fetch.offset, t), t)
            if ir.ticket_holds(self.kernel, e):   # a fetch-and-add's result, as the solver names it
                return self._draw(e, t)
            return _Lazy(self, f"opaque{e.site}", self._iters(t), t.k)
        raise ReplayError(f"unknown expression {type(e).__name__}")

    def _draw(self, e: ir.Opaque, t: _Thread) -> "_Lazy":
        """A ticket's value, as the solver names it, so the model's values are the replay's: a
        range ticket's amount is its second argument, evaluated again without recording its reads
        (the atomic recorded them). (The draws a query did not name get the model's default value,
        which may equal another thread's: a real execution draws them apart, where the witness
        does not look.)"""
        loops, at = ir.draw_loops(self.kernel).get(e.fetch.id), dict(t.loops)
        if loops is None or not set(loops) <= set(at):   # as the solver names it (atomic_order.py)
            return _Lazy(self, f"opaque{e.site}", self._iters(t), t.k)
        quiet, self._quiet = self._quiet, True
        try:
            amount = None if e.amount is None else self._int(e.amount, t)
        finally:
            self._quiet = quiet
        args = (self._int(e.ticket, t),) + (() if amount is None else (amount,)) + tuple(at[lid] for lid in loops)
        return _Lazy(self, ir.ticket_name(e), args, t.k)

    def _int(self, e, t: _Thread) -> int:
        v = self._eval(e, t)
        return v.value() if isinstance(v, _Lazy) else v

    def _read(self, acc: ir.Access, t: _Thread):
        offset = self._int(acc.offset, t)
        if acc.space == ir.PRIVATE:
            hit = t.private.get((acc.buffer, offset))
            if hit is not None and hit[0] == acc.width:
                return hit[1]
            return _Lazy(self, f"private:{acc.buffer}", (offset,) + self._iters(t), t.k)
        self._record(acc, offset, None, t)
        if acc.atomic and ir.changed_atomically(self.kernel, acc.buffer):   # as the solver names it (symbolic.py)
            return _Lazy(self, f"aload{acc.id}", (offset,) + self._iters(t), t.k)
        return self._loaded(acc, offset, t)

    def _loaded(self, acc: ir.Access, offset: int, t: _Thread) -> "_Lazy":
        site = self.read_only.get(acc.buffer)
        if site is not None:   # as the solver names it (symbolic.py)
            return _Lazy(self, f"load{site.id}", (offset,), t.k)
        return _Lazy(self, f"load{acc.id}", (offset,) + self._iters(t), t.k)

    def _builtin(self, name: str, t: _Thread) -> int:
        lc = self.launch
        linear = t.tid["x"] + lc.block_dim["x"] * (t.tid["y"] + lc.block_dim["y"] * t.tid["z"])
        if name.startswith("tid."):
            return t.tid[name[4:]]
        if name.startswith("bid."):
            return t.bid[name[4:]]
        if name.startswith("bdim."):
            return lc.block_dim[name[5:]]
        if name.startswith("gdim."):
            return lc.grid_dim[name[5:]]
        if name == "lane":
            return linear % lc.warp_size
        if name == "warp":
            return linear // lc.warp_size
        if name == "linear_tid":
            return linear
        raise ReplayError(f"unknown builtin {name}")


_MISSING = object()


class _Lazy:
    """An uninterpreted value (a load, a float operation, a shuffle's result), evaluated by
    `unknown` when first needed; a vector keeps its components for private stores."""
    __slots__ = ("replay", "name", "args", "k", "comps", "_value")

    def __init__(self, replay: "Replay", name: str, args: tuple, k: int, comps: tuple | None = None):
        self.replay, self.name, self.args, self.k, self.comps = replay, name, args, k, comps
        self._value: int | None = None

    def value(self) -> int:
        if self._value is None:
            args = tuple(a.value() if isinstance(a, _Lazy) else a for a in self.args)
            self._value = self.replay.unknown(self.name, args, self.k)
        return self._value


def _trunc_div(a: int, b: int) -> int:
    if b == 0:
        raise ReplayError("division by zero")
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def _binop(op: str, a: int, b: int) -> int:
    if op == "+":
        return a + b
    if op == "-":
        return a - b
    if op == "*":
        return a * b
    if op == "/":
        return _trunc_div(a, b)
    if op == "%":
        return a - b * _trunc_div(a, b)
    if op in ("fdiv", "fmod"):
        if b == 0:
            raise ReplayError("division by zero")
        return a // b if op == "fdiv" else a - b * (a // b)
    if op in ("<<", ">>"):
        if not 0 <= b < 64:
            raise ReplayError(f"shift by {b}")
        return a << b if op == "<<" else a >> b
    if op == "&":
        return a & b
    if op == "|":
        return a | b
    if op == "^":
        return a ^ b
    if op in ("==", "!=", "<", "<=", ">", ">="):
        return int({"==": a == b, "!=": a != b, "<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b}[op])
    raise ReplayError(f"unknown operator {op}")


@dataclass
class Side:
    """One thread of a witness: who it is, which access it runs, in which iterations."""
    tid: tuple[int, int, int]
    access: int
    iterations: dict[int, int]      # loop id -> iteration, for the loops around the access
    warp: int


def check_witness(kernel: ir.Kernel, launch: Launch, unknown: Unknown, bid: tuple[int, int, int],
                  one: Side, two: Side, byte: int, space: str | None,
                  bid2: tuple[int, int, int] | None = None,
                  read_only: dict[str, ir.Access] | None = None,
                  lines: dict[int, int] | None = None) -> str | None:
    """None when the witness replays: each thread runs its access in the given iterations, both
    instances cover `byte`, and the threads passed as many barriers before them (those ordering
    `space`, or all when it is None; warp barriers count for threads of one warp). Otherwise the
    reason it does not.

    With `bid2`, thread 2 runs in that block (a grid witness, grid.py): the blocks must differ
    and must lie inside the grid, and only grid syncs matter (no other barrier orders two blocks).
    `read_only`: the kernel's `ir.read_only_loads`, and `lines`: `access_lines(kernel)`, when the
    caller has them (a caller replaying many witnesses of one kernel computes each once)."""
    grid = bid2 is not None
    if grid:
        if tuple(bid2) == tuple(bid):
            return "both sides are in the same block"
        for b in (bid, bid2):
            if any(not 0 <= v < launch.grid_dim[d] for d, v in zip("xyz", b)):
                return f"block {tuple(b)} lies outside the grid"
    elif one.tid == two.tid:
        return "both sides are the same thread"
    replay = Replay(kernel, launch, unknown, {one.access, two.access}, read_only)
    found = []
    for side, k, block in ((one, 1, bid), (two, 2, bid2 if grid else bid)):
        want = tuple(sorted(side.iterations.items()))
        try:
            runs = replay.run(side.tid, block, k, until=(side.access, want))
        except ReplayError as exc:
            return f"thread {side.tid} cannot be run on these values: {exc}"
        hit = [i for i in runs if i.access == side.access and tuple(sorted(i.iterations)) == want]
        if not hit:
            shown = ", ".join(f"loop {lid} iteration {n}" for lid, n in want) or "outside loops"
            return f"thread {side.tid} does not run the access at line {_line(kernel, side.access, lines)} ({shown})"
        inst = hit[0]
        if not inst.offset <= byte < inst.offset + inst.width:
            return (f"thread {side.tid} touches bytes {inst.offset}..{inst.offset + inst.width - 1} at line "
                    f"{_line(kernel, side.access, lines)}, not byte {byte}")
        found.append(inst)
    if grid:
        g1, g2 = found[0].grid_syncs, found[1].grid_syncs
        if g1 != g2:
            return f"a grid sync separates them (thread {one.tid} passed {g1}, thread {two.tid} passed {g2})"
        return None
    (b1, w1), (b2, w2) = found[0].passed(space), found[1].passed(space)
    if b1 != b2 or (one.warp == two.warp and w1 != w2):
        return f"a barrier separates them (thread {one.tid} passed {b1 + w1}, thread {two.tid} passed {b2 + w2})"
    return None


def access_lines(kernel: ir.Kernel) -> dict[int, int]:
    """Access id -> the line of its first site (a walk over the whole kernel)."""
    out: dict[int, int] = {}
    for acc in ir.accesses(kernel.body):
        out.setdefault(acc.id, acc.span.line)
    return out


def _line(kernel: ir.Kernel, access_id: int, lines: dict[int, int] | None = None) -> int | str:
    if lines is not None:
        return lines.get(access_id, "?")
    return next((acc.span.line for acc in ir.accesses(kernel.body) if acc.id == access_id), "?")
