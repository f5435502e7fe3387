"""The IR run on concrete values, one thread at a time between barriers.

Each thread is a generator that runs until its next barrier (yielding the barrier's scope) or its
end; `schedule.py` decides which thread runs next. Global and shared memory hold one value per
element; an element never written reads its seeded input value (values.py), so a kernel needs no
buffer sizes, only its scalar parameters and launch extents. Every shared or global access is
handed to the detector with the thread's barrier counts (detector.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from analyzer import ir
from analyzer.dynamic.calls import call
from analyzer.dynamic.compiled import compile_expr
from analyzer.dynamic.values import BF16, F16, F32, F64, INT, InterpretError, as_kind, decode, encode, initial, is_float, kind_of, view_kind

# Statements one thread may run, and all threads of a run together, before the run stops: a loop
# over a large extent needs a smaller --scalar, not minutes.
THREAD_STEPS = 200_000
RUN_STEPS = 3_000_000
DIMS = ("x", "y", "z")


@dataclass
class Launch:
    """What a run needs besides the kernel: every scalar parameter, the extents, the seed."""
    params: dict[str, int]
    block_dim: dict[str, int]
    grid_dim: dict[str, int]
    seed: int = 0
    warp_size: int = 32
    # Buffer contracts in force (`prob:nondecreasing`, analyzer/analysis/stated/contracts.py): the inputs
    # drawn for a buffer keep its contract, as the data the analysis assumed does.
    contracts: dict[str, str] = field(default_factory=dict)

    @property
    def threads(self) -> int:
        return self.block_dim["x"] * self.block_dim["y"] * self.block_dim["z"]


class _Break(Exception):
    pass


class _Continue(Exception):
    pass


class _Return(Exception):
    pass


@dataclass
class Thread:
    linear: int
    tid: dict[str, int]
    bid: dict[str, int]
    warp: int
    env: dict = field(default_factory=dict)
    private: dict = field(default_factory=dict)     # (buffer, element) -> value
    ordered: dict = field(default_factory=dict)     # space -> [block barriers, warp barriers] passed
    steps: int = 0
    fetched: dict = field(default_factory=dict)     # atomic access id -> the old value it last returned
    iters: dict = field(default_factory=dict)       # loop id -> iteration, for the loops it is in


def where(span: ir.Span) -> str:
    return f"{span.file}:{span.line}"


class Interpreter:
    """Runs one kernel's threads on one launch; `memory` is shared by every block it runs."""

    def __init__(self, kernel: ir.Kernel, launch: Launch, observe=None, lockstep: bool = False,
                 run_steps: int = RUN_STEPS):
        self.kernel = kernel
        self.run_steps = run_steps
        # Every thread yields after each statement: the scheduler then advances all of them one
        # statement at a time (the lockstep a kernel written for one warp assumes).
        self.lockstep = lockstep
        self.launch = launch
        self.observe = observe          # observe(thread, access, byte offset, is_write, value, element size) or None
        self.memory: dict[str, dict[int, object]] = {}
        self.written: dict[str, set[int]] = {}
        # (block, thread) of the threads that accessed outside a buffer's declared shape or fixed
        # size, or past a fixed-size dimension (ir.Access.bounds): undefined behaviour, which a
        # run goes on past (each out-of-range element its own), as the static analysis's
        # `out-of-bounds` finding has it.
        self.left: set[tuple] = set()
        self.steps = 0
        self._kinds = {name: kind_of(b.elem_type) for name, b in kernel.buffers.items()}
        self._signed = {name: not b.elem_type.strip().startswith(("u", "unsigned")) for name, b in kernel.buffers.items()}
        self._barriers = _holding_barriers(kernel.body)
        self._compiled: dict = {}
        self._keep: list = []
        # Element sizes in scalar components: a `float4` array holds four floats per element.
        self._unit = {name: b.elem_size // _lanes(b.elem_type) if b.elem_size else 0 for name, b in kernel.buffers.items()}
        self._contract = {}
        for name, b in kernel.buffers.items():
            for key in (name, b.display, name[:-4] if name.endswith("_ptr") else None):
                if key and key in launch.contracts:
                    self._contract[name] = launch.contracts[key]

    # ---------- threads ----------

    def thread(self, linear: int, bid: dict[str, int]) -> Thread:
        bd = self.launch.block_dim
        tid = {"x": linear % bd["x"], "y": linear // bd["x"] % bd["y"], "z": linear // (bd["x"] * bd["y"])}
        return Thread(linear, tid, dict(bid), linear // self.launch.warp_size)

    def run(self, t: Thread):
        """A generator: runs `t` up to each barrier, yielding the barrier's scope."""
        try:
            yield from self._block(self.kernel.body, t)
        except _Return:
            pass
        except (_Break, _Continue):
            raise InterpretError("a break or continue outside every loop") from None

    def _block(self, stmts, t: Thread):
        for s in stmts:
            if self.lockstep:
                if isinstance(s, (ir.If, ir.Loop, ir.Barrier)):
                    yield from self._stmt_with_barriers(s, t)
                else:
                    self._stmt(s, t)
                    yield "step"
            elif id(s) in self._barriers:
                yield from self._stmt_with_barriers(s, t)
            else:
                self._stmt(s, t)

    def _tick(self, t: Thread, s) -> None:
        t.steps += 1
        self.steps += 1
        if t.steps > THREAD_STEPS or self.steps > self.run_steps:
            raise InterpretError(f"more than {min(THREAD_STEPS, self.run_steps) if t.steps > THREAD_STEPS else self.run_steps:,} "
                                 f"statements (a loop over a large extent at {where(_span(s))}): use a smaller "
                                 f"--scalar for the extent")

    def _stmt_with_barriers(self, s, t: Thread):
        self._tick(t, s)
        if isinstance(s, ir.Barrier):
            scope = 1 if s.scope == ir.WARP else 0   # a grid sync is a block barrier too
            for space in s.spaces:
                t.ordered.setdefault(space, [0, 0])[scope] += 1
            yield s.scope
        elif isinstance(s, ir.If):
            yield from self._block(s.then if self._truth(s.cond, t, s) else s.orelse, t)
        elif isinstance(s, ir.Loop):
            self._block_plain(s.init, t)
            t.iters[s.id] = 0
            try:
                while s.cond is None or self._truth(s.cond, t, s):
                    try:
                        yield from self._block(s.body, t)
                    except _Continue:
                        pass
                    yield from self._block(s.update, t)
                    self._tick(t, s)
                    t.iters[s.id] += 1
            except _Break:
                pass
            finally:
                t.iters.pop(s.id, None)
        else:
            raise InterpretError(f"a barrier inside {type(s).__name__} at {where(_span(s))}")

    def _block_plain(self, stmts, t: Thread) -> None:
        for s in stmts:
            self._stmt(s, t)

    def _stmt(self, s, t: Thread) -> None:
        self._tick(t, s)
        if isinstance(s, ir.Assign):
            t.env[s.target] = self._eval(s.value, t, s)
        elif isinstance(s, ir.MemOp):
            self._memop(s.access, t, s)
        elif isinstance(s, ir.Eval):
            self._eval(s.value, t, s)
        elif isinstance(s, ir.If):
            self._block_plain(s.then if self._truth(s.cond, t, s) else s.orelse, t)
        elif isinstance(s, ir.Loop):
            self._block_plain(s.init, t)
            t.iters[s.id] = 0
            try:
                while s.cond is None or self._truth(s.cond, t, s):
                    try:
                        self._block_plain(s.body, t)
                    except _Continue:
                        pass
                    self._block_plain(s.update, t)
                    self._tick(t, s)
                    t.iters[s.id] += 1
            except _Break:
                pass
            finally:
                t.iters.pop(s.id, None)
        elif isinstance(s, ir.Break):
            raise _Break
        elif isinstance(s, ir.Continue):
            raise _Continue
        elif isinstance(s, ir.Return):
            raise _Return
        elif isinstance(s, ir.Barrier):
            raise InterpretError(f"a barrier the scheduler did not see at {where(s.span)}")
        else:
            raise InterpretError(f"the statement {type(s).__name__}")

    # ---------- memory ----------

    def _elements(self, acc: ir.Access, offset: int, s) -> tuple[int, int]:
        size = self._unit.get(acc.buffer) or acc.elem_size
        size = size or 1
        if offset % size or acc.width % size:
            raise InterpretError(f"a {acc.width}-byte access at byte {offset} of {acc.buffer} (elements of "
                                 f"{size} bytes) at {where(acc.span)}")
        return offset // size, acc.width // size

    def _load(self, acc: ir.Access, first: int, n: int, t: Thread):
        kind = self._kinds.get(acc.buffer, INT)
        if acc.space == ir.PRIVATE:
            store = t.private
            vals = [store.get((acc.buffer, i)) for i in range(first, first + n)]
            vals = [v if v is not None else initial(self.launch.seed + 7919 * t.linear, acc.buffer, i, kind)
                    for v, i in zip(vals, range(first, first + n))]
        else:
            mem = self.memory.setdefault(acc.buffer, {})
            vals = []
            for i in range(first, first + n):
                v = mem.get(i)
                if v is None:
                    v = mem[i] = self._input(acc.buffer, i, kind)
                vals.append(v)
        return vals[0] if n == 1 else tuple(vals)

    def _input(self, buffer: str, i: int, kind: str):
        prop = self._contract.get(buffer)
        if prop is None:
            return initial(self.launch.seed, buffer, i, kind)
        if prop == "nondecreasing":   # steps of 1 or 2: a prefix sum of small positive values
            return as_kind(2 * i + initial(self.launch.seed, buffer, i, INT) % 2, kind)
        if prop == "distinct" or prop.startswith(("distinct-except(", "distinct-across(")):
            return as_kind(i, kind)    # all different: no sentinel, no two segments share a value
        if prop.startswith("range="):
            lo, hi = (int(x) for x in prop[6:].split(".."))
            return as_kind(lo + initial(self.launch.seed, buffer, i, INT) % (hi - lo + 1), kind)
        return initial(self.launch.seed, buffer, i, kind)

    def _store(self, acc: ir.Access, first: int, n: int, value, t: Thread) -> None:
        kind = self._kinds.get(acc.buffer, INT)
        size = self._unit.get(acc.buffer) or 4
        comps = value if isinstance(value, tuple) else (value,)
        if len(comps) != n or (acc.view and kind_of(acc.view) != kind):
            if n % len(comps):
                raise InterpretError(f"a store of {len(comps)} values into {n} elements of {acc.buffer} "
                                     f"at {where(acc.span)}")
            # A reinterpreting store (`*(float4*)half_buf = ...`, `((float*)half_buf)[i] = x`): the
            # values' bytes, read back as the buffer's elements.
            part = size * n // len(comps)
            vk = kind_of(acc.view) if acc.view else (view_kind(kind, part) if is_float(comps[0]) else INT)
            if vk != INT and {F16: 2, BF16: 2, F32: 4, F64: 8}[vk] != part:
                vk = view_kind(kind, part)
            raw = b"".join(encode(c, vk, part) for c in comps)
            comps = tuple(decode(raw[i * size:(i + 1) * size], kind, self._signed.get(acc.buffer, True))
                          for i in range(n))
        signed = self._signed.get(acc.buffer, True)
        conv = [as_kind(c, kind, size, signed) if not isinstance(c, tuple) else _no_nested(acc) for c in comps]
        if acc.space == ir.PRIVATE:
            for i, c in enumerate(conv):
                t.private[(acc.buffer, first + i)] = c
            return
        mem = self.memory.setdefault(acc.buffer, {})
        written = self.written.setdefault(acc.buffer, set())
        for i, c in enumerate(conv):
            mem[first + i] = c
            written.add(first + i)

    def _memop(self, acc: ir.Access, t: Thread, s) -> None:
        offset = self._int(acc.offset, t, s)
        first, n = self._elements(acc, offset, s)
        if acc.atomic:
            self._atomic(acc, first, n, offset, t, s)
            return
        if not acc.is_write:
            self._load(acc, first, n, t)
            self._seen(t, acc, offset, False, s=s)
            return
        value = self._eval(acc.value, t, s) if acc.value is not None else None
        if value is None:
            raise InterpretError(f"a write without a value at {where(acc.span)}")
        self._seen(t, acc, offset, True, value, s)
        self._store(acc, first, n, value, t)

    def _atomic(self, acc: ir.Access, first: int, n: int, offset: int, t: Thread, s) -> None:
        old = self._load(acc, first, n, t)
        v = acc.value
        if not acc.is_write:
            t.fetched[acc.id] = old
            self._seen(t, acc, offset, False, s=s)
            return
        fn = v.fn.lower() if isinstance(v, ir.Call) else ""
        args = v.args if isinstance(v, ir.Call) else ((v,) if v is not None else ())
        x = self._eval(args[0], t, s) if args else None
        if "cas" in fn or "compare" in fn:
            new = self._eval(args[1], t, s) if old == x else old
        elif "add" in fn or "inc" in fn:
            new = old + (x if x is not None else 1)
        elif "sub" in fn or "dec" in fn:
            new = old - (x if x is not None else 1)
        elif "max" in fn:
            new = max(old, x)
        elif "min" in fn:
            new = min(old, x)
        elif "and" in fn:
            new = old & x
        elif "xor" in fn:
            new = old ^ x
        elif "or" in fn:
            new = old | x
        elif "exch" in fn or "store" in fn or not fn:
            new = x
        else:
            raise InterpretError(f"the atomic {v.fn} at {where(acc.span)}")
        t.fetched[acc.id] = old
        self._seen(t, acc, offset, True, s=s)
        self._store(acc, first, n, new, t)

    def _seen(self, t: Thread, acc: ir.Access, offset: int, is_write: bool, value=None, s=None) -> None:
        if self._outside(acc, offset, t, s):
            self.left.add(((t.bid["x"], t.bid["y"], t.bid["z"]), (t.tid["x"], t.tid["y"], t.tid["z"])))
        if self.observe is not None and acc.space in (ir.SHARED, ir.GLOBAL):
            self.observe(t, acc, offset, is_write, value, self._unit.get(acc.buffer) or acc.elem_size or 1)

    def _outside(self, acc: ir.Access, offset: int, t: Thread, s) -> bool:
        buf = self.kernel.buffers.get(acc.buffer)
        if buf is None or acc.space == ir.PRIVATE:
            return False
        if (buf.declared or buf.size_bytes) and offset < 0:
            return True
        if buf.size_bytes and offset + acc.width > buf.size_bytes:
            return True
        return any(not 0 <= self._int(index, t, s) < extent for index, extent in acc.bounds)

    # ---------- expressions ----------

    def _truth(self, e, t: Thread, s) -> bool:
        v = self._eval(e, t, s)
        if isinstance(v, tuple):
            raise InterpretError(f"a vector used as a condition at {where(_span(s))}")
        return bool(v)

    def _int(self, e, t: Thread, s) -> int:
        v = self._eval(e, t, s)
        if isinstance(v, tuple) or is_float(v):
            raise InterpretError(f"a non-integer index at {where(_span(s))}")
        return int(v)

    def _eval(self, e, t: Thread, s):
        key = (id(e), id(s))
        fn = self._compiled.get(key)
        if fn is None:
            fn = self._compiled[key] = compile_expr(self, e, s)
            self._keep.append((e, s))   # the ids stay theirs while the closure is cached
        return fn(t)

    def _not_integer(self, s):
        raise InterpretError(f"a non-integer index at {where(_span(s))}")

    def _binop_values(self, op, a, b, s):
        return _binop(op, a, b, s)

    def _call(self, fn, args, s):
        try:
            return call(fn, args, self.kernel.lang)
        except InterpretError as exc:
            raise InterpretError(f"{exc} at {where(_span(s))}") from None

    def _read(self, acc: ir.Access, offset: int, t: Thread, s):
        first, n = self._elements(acc, offset, s)
        value = self._load(acc, first, n, t)
        if acc.view:
            count = _lanes(acc.view)
            if count != n or kind_of(acc.view) != self._kinds.get(acc.buffer, INT):
                # A reinterpreting read: the buffer's bytes as `count` values of the view's type.
                value = self._repack(acc, value if n > 1 else (value,), count)
        self._seen(t, acc, offset, False, s=s)
        return value

    def _repack(self, acc: ir.Access, comps: tuple, count: int):
        """`comps` (the buffer's own elements) read as `count` values of width / count bytes."""
        kind = self._kinds.get(acc.buffer, INT)
        unit = self._unit.get(acc.buffer) or acc.elem_size
        raw = b"".join(encode(c, kind, unit) for c in comps)
        size = len(raw) // count
        vk = kind_of(acc.view)
        view = vk if vk != INT else INT
        signed = not acc.view.strip().startswith(("u", "unsigned"))
        if view != INT and {F16: 2, BF16: 2, F32: 4, F64: 8}.get(view) != size:
            view = view_kind(kind, size)
        out = tuple(decode(raw[i * size:(i + 1) * size], view, signed) for i in range(count))
        return out[0] if count == 1 else out

    def _eval_tree(self, e, t: Thread, s):
        if isinstance(e, ir.Const):
            return e.value
        if isinstance(e, ir.Var):
            if e.name in t.env:
                return t.env[e.name]
            return initial(self.launch.seed + 104729 * t.linear, "undef:" + e.name, 0, INT)
        if isinstance(e, ir.Param):
            if e.name not in self.launch.params:
                raise InterpretError(f"no value for the parameter {e.name}: give it with --scalar {e.name}=N")
            return self.launch.params[e.name]
        if isinstance(e, ir.Builtin):
            return self._builtin(e.name, t, s)
        if isinstance(e, ir.BinOp):
            if e.op in ("&&", "||"):
                a = self._truth(e.a, t, s)
                if (e.op == "&&") != a:
                    return int(a)
                return int(self._truth(e.b, t, s))
            return _binop(e.op, self._eval(e.a, t, s), self._eval(e.b, t, s), s)
        if isinstance(e, ir.UnOp):
            a = self._eval(e.a, t, s)
            if e.op == "-":
                return -a
            if e.op == "!":
                return int(not a)
            if e.op == "~" and not is_float(a):
                return ~a
            raise InterpretError(f"the operator {e.op} on {type(a).__name__} at {where(_span(s))}")
        if isinstance(e, ir.Select):
            return self._eval(e.a, t, s) if self._truth(e.cond, t, s) else self._eval(e.b, t, s)
        if isinstance(e, ir.Call):
            if e.fn.startswith("ptr:"):
                raise InterpretError(f"a pointer value ({e.fn[4:]}) at {where(_span(s))}")
            try:
                return call(e.fn, tuple(self._eval(a, t, s) for a in e.args), self.kernel.lang)
            except InterpretError as exc:
                raise InterpretError(f"{exc} at {where(_span(s))}") from None
        if isinstance(e, ir.Read):
            acc = e.access
            offset = self._int(acc.offset, t, s)
            first, n = self._elements(acc, offset, s)
            value = self._load(acc, first, n, t)
            self._seen(t, acc, offset, False, s=s)
            return value
        if isinstance(e, ir.Opaque):
            if e.fetch is not None and e.fetch.id in t.fetched:
                return t.fetched[e.fetch.id]
            raise InterpretError(f"{e.why} at {where(_span(s))}")
        raise InterpretError(f"the expression {type(e).__name__} at {where(_span(s))}")

    def _builtin(self, name: str, t: Thread, s) -> int:
        lc = self.launch
        if name.startswith("tid."):
            return t.tid[name[4:]]
        if name.startswith("bid."):
            return t.bid[name[4:]]
        if name.startswith("bdim."):
            return lc.block_dim[name[5:]]
        if name.startswith("gdim."):
            return lc.grid_dim[name[5:]]
        if name == "lane":
            return t.linear % lc.warp_size
        if name == "warp":
            return t.linear // lc.warp_size
        if name == "linear_tid":
            return t.linear
        raise InterpretError(f"the builtin {name} at {where(_span(s))}")


def _lanes(type_name: str) -> int:
    """Components of a vector element type: `float4`, `half2`, `vec4<f32>`, `packed_float3`; 1 else."""
    import re
    t = type_name.replace("const", "").strip()
    m = re.search(r"vec(\d)<", t) or re.search(r"(?:float|half|int|uint|short|ushort|char|uchar|long|ulong|double|bool|bfloat16?)(\d)$", t)
    return int(m.group(1)) if m and int(m.group(1)) in (2, 3, 4, 8, 16) else 1


def _no_nested(acc: ir.Access):
    raise InterpretError(f"a nested vector stored at {where(acc.span)}")


def _span(s) -> ir.Span:
    return s.access.span if isinstance(s, ir.MemOp) else s.span


def _holding_barriers(body) -> set[int]:
    """The ids of the statements that are, or contain, a barrier: only they need to suspend."""
    out: set[int] = set()

    def visit(stmts) -> bool:
        found = False
        for s in stmts:
            here = isinstance(s, ir.Barrier)
            if isinstance(s, ir.If):
                here = visit(s.then) | visit(s.orelse)
            elif isinstance(s, ir.Loop):
                here = visit(s.init) | visit(s.body) | visit(s.update)
            if here:
                out.add(id(s))
                found = True
        return found

    visit(body)
    return out


def _trunc_div(a: int, b: int, s) -> int:
    if b == 0:
        raise InterpretError(f"a division by zero at {where(_span(s))}")
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def _binop(op: str, a, b, s):
    if isinstance(a, tuple) or isinstance(b, tuple):
        raise InterpretError(f"vector operands of {op} at {where(_span(s))}")
    if is_float(a) or is_float(b):
        if op in ("==", "!=", "<", "<=", ">", ">="):
            return int({"==": a == b, "!=": a != b, "<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b}[op])
        if op in ("+", "-", "*", "/"):
            return call("f" + op, (a, b), "")
        raise InterpretError(f"the operator {op} on floats at {where(_span(s))}")
    if op == "+":
        return a + b
    if op == "-":
        return a - b
    if op == "*":
        return a * b
    if op == "/":
        return _trunc_div(a, b, s)
    if op == "%":
        return a - b * _trunc_div(a, b, s)
    if op in ("fdiv", "fmod"):
        if b == 0:
            raise InterpretError(f"a division by zero at {where(_span(s))}")
        return a // b if op == "fdiv" else a - b * (a // b)
    if op in ("<<", ">>"):
        if not 0 <= b < 64:
            raise InterpretError(f"a shift by {b} at {where(_span(s))}")
        return a << b if op == "<<" else a >> b
    if op == "&":
        return a & b
    if op == "|":
        return a | b
    if op == "^":
        return a ^ b
    if op in ("==", "!=", "<", "<=", ">", ">="):
        return int({"==": a == b, "!=": a != b, "<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b}[op])
    raise InterpretError(f"the operator {op} at {where(_span(s))}")
