"""The kernel IR every front end lowers into, and the only program form rules and analyses see.

Expressions are integer-valued trees (C semantics: signed, truncating division). Values the
analysis does not interpret (floats, math functions) are `Call`s of uninterpreted functions, so
equal inputs still give provably equal outputs. Memory is addressed in bytes from a buffer's base.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Union

# Memory spaces.
SHARED = "shared"      # CUDA __shared__, Metal threadgroup
GLOBAL = "global"      # CUDA global, Metal device
PRIVATE = "private"    # per-thread arrays
CONSTANT = "constant"  # read-only for the kernel
SPACES = (SHARED, GLOBAL, PRIVATE, CONSTANT)

# Barrier execution scopes.
BLOCK = "block"
WARP = "warp"
# A grid-wide sync (CUDA cooperative groups' `this_grid().sync()`): every thread of every block
# waits. It orders two threads of one block as a block barrier does, and two blocks as well.
GRID = "grid"


@dataclass(frozen=True)
class Span:
    file: str
    line: int
    col: int
    origin: "Span | None" = None   # where the source this was compiled from says it is (SPIR-V OpLine)

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}"


# ---------- expressions ----------

@dataclass(frozen=True)
class Const:
    value: int


@dataclass(frozen=True)
class Var:
    """A local scalar variable (or a component of a local vector or private array)."""
    name: str


@dataclass(frozen=True)
class Builtin:
    """Thread/block/warp builtins: tid.x, bid.y, bdim.z, gdim.x, lane, warp."""
    name: str


@dataclass(frozen=True)
class Param:
    """A scalar kernel parameter (or a field of a constant argument struct)."""
    name: str


@dataclass(frozen=True)
class BinOp:
    op: str  # + - * / % << >> & | ^ == != < <= > >= && ||
    a: "Expr"
    b: "Expr"


@dataclass(frozen=True)
class UnOp:
    op: str  # - ! ~
    a: "Expr"


@dataclass(frozen=True)
class Select:
    cond: "Expr"
    a: "Expr"
    b: "Expr"


@dataclass(frozen=True)
class Call:
    """A pure function the analysis does not interpret (float math, conversions, ...)."""
    fn: str
    args: tuple["Expr", ...]
    # A conversion whose argument has an integer type in the source (`(float)n` of an `int n`):
    # the float holds that integer where it is exact (integral_floats.py). The IR's own nodes do
    # not say so of a parameter or a variable: `(float)d` of a `double d` is no integer.
    int_arg: bool = False


@dataclass(frozen=True)
class Read:
    """The value read by a memory access (the access also appears as an event)."""
    access: "Access"


@dataclass(frozen=True)
class Opaque:
    """A value the front end cannot express: different per thread. With `source` (a linear
    thread index), it is a value held by that thread (a warp shuffle's): threads reading the
    same source at the same site in the same iterations read the same value."""
    why: str
    site: int
    source: "Expr | None" = None
    # A fetch-and-add of a positive constant (`atomicAdd(ctr, 1)`): the byte offset it updates.
    # Two threads that fetch at this site from the same offset receive different values.
    ticket: "Expr | None" = None
    # The counter is in global memory, one for the grid: tickets differ between blocks too (a
    # shared-memory counter is each block's own, and two blocks may draw equal tickets from theirs).
    grid_counter: bool = False
    step: int = 1   # the constant added: two tickets of one site are at least this far apart
    # A range ticket (a fetch-add of an unsigned amount not known as a constant, `atomic_op`
    # "grow"): the amount, so that two draws r1, r2 of amounts n1, n2 from a counter that only
    # grows hold apart ranges, r1 + n1 <= r2 or r2 + n2 <= r1 (analysis/decision/tickets.py).
    amount: "Expr | None" = None
    # The atomic access whose old value this is (an atomic's result): the last-block pattern
    # (analysis/interblock/last_block.py) finds the counter a ticket is drawn from through it.
    fetch: "Access | None" = field(default=None, compare=False, hash=False)


Expr = Union[Const, Var, Builtin, Param, BinOp, UnOp, Select, Call, Read, Opaque]


# A read of a read-only image (a sampled texture: WGSL's textureSample*/textureLoad, SPIR-V's
# OpImageFetch & co) is `Call(IMAGE_READ + "FN:IMAGE.LANE", operands)`: a pure function of the image
# and the operands, as a load of a buffer nothing writes; the interpreter gives it seeded contents.
IMAGE_READ = "image-read:"

# CUDA's bit intrinsics on an N-bit unsigned operand: name -> (what, N). The solver encodes them
# exactly where it knows the operand's bits (power_bits.py); the replay and the interpreter compute them.
BIT_INTRINSICS = {"__popc": ("count", 32), "__popcll": ("count", 64), "__brev": ("reverse", 32),
                  "__brevll": ("reverse", 64)}


def bit_intrinsic(fn: str, x: int) -> int:
    """The value of a BIT_INTRINSICS call on the integer x (taken as its type's N-bit unsigned)."""
    what, n = BIT_INTRINSICS[fn]
    bits = format(x & ((1 << n) - 1), f"0{n}b")
    return bits.count("1") if what == "count" else int(bits[::-1], 2)


def ticket_name(e: Opaque) -> str:
    """The solver's (and the replay's) name of a fetch-and-add's result: `gticket` for a grid-wide
    counter's, which differs between blocks too; `xN` when it adds N > 1."""
    if e.amount is not None:   # a range ticket: its arguments are the offset, then the amount
        return f"{'gticket' if e.grid_counter else 'ticket'}{e.site}r"
    return f"{'gticket' if e.grid_counter else 'ticket'}{e.site}" + (f"x{e.step}" if e.step > 1 else "")


def operands(e) -> tuple:
    """The direct sub-expressions of an expression, in evaluation order. Also serves the
    analyses' own term nodes, which keep theirs in `args`."""
    kind = type(e)
    if kind is BinOp:       # the commonest, by exact type first
        return (e.a, e.b)
    if kind is UnOp:
        return (e.a,)
    if isinstance(e, Opaque):
        return tuple(x for x in (e.source, e.ticket, e.amount) if x is not None)
    if isinstance(e, BinOp):
        return (e.a, e.b)
    if isinstance(e, UnOp):
        return (e.a,)
    if isinstance(e, Select):
        return (e.cond, e.a, e.b)
    return tuple(getattr(e, "args", ()))


# ---------- statements ----------

@dataclass(eq=False)
class Access:
    """One memory access site: `width` bytes at byte `offset` of `buffer`."""
    buffer: str
    space: str
    offset: Expr
    width: int
    is_write: bool
    span: Span
    elem_size: int = 1          # element size of the buffer's declared type, for reporting
    atomic: bool = False
    value: Expr | None = None   # the stored value, for writes
    id: int = 0
    # The type the access goes through when it is not the buffer's (`((float*)half_buf)[i]`,
    # `*(uint4*)p`), where the front end knows it (the C family): how its bytes are read.
    view: str = ""
    # An atomic access's operation (one of ATOMIC_OPS) and scope (BLOCK or GRID: the threads it is
    # atomic with), set by frontend/atomics.py in every dialect.
    atomic_op: str = ""
    scope: str = ""
    step: int = 0   # what an atomic increment or decrement adds (negative for a decrement)
    # The subscripts of fixed-size dimensions the access goes through, each with its extent
    # (`t[i][j]` of `float t[32][33]`: (i, 32), (j, 33)), where the front end knows them: in
    # bounds, 0 <= i < extent, whatever the flattened offset allows.
    bounds: tuple[tuple["Expr", int], ...] = ()

    @property
    def kind(self) -> str:
        return "write" if self.is_write else "read"


# What an atomic access does. An increment (a fetch-add of a positive constant, or a fetch-sub of
# a negative one) and a decrement are told apart from the other read-modify-writes: draws from a
# counter that only moves one way are tickets (`ticket_holds`). A "grow" is a fetch-add of an
# unsigned amount not known as a constant: it moves the counter up (a counter never wraps around).
# An "add" is a fetch-add of a signed amount not known as a constant: a grow where the IR proves
# the amount non-negative (`atomic_op_of`), else a read-modify-write.
ATOMIC_OPS = ("load", "store", "increment", "decrement", "grow", "add", "rmw")


def atomic_op_of(kernel: "Kernel", acc: "Access") -> str:
    """What an atomic does to its element: its `atomic_op`, a signed "add" read as a grow or a
    read-modify-write (`ir.atomic_op_of`)."""
    if acc.atomic_op != "add":
        return acc.atomic_op
    return "grow" if _signed_grows(kernel, acc) else "rmw"


def default_scope(space: str) -> str:
    """The threads an atomic on `space` is atomic with when its dialect names no scope."""
    return GRID if space == GLOBAL else BLOCK


def atomic_together(a: Access, b: Access, between_blocks: bool) -> bool:
    """Whether two accesses are atomics that are atomic with each other (so never race): both
    atomic, with scopes that take in both threads (the grid's for threads of two blocks)."""
    if not (a.atomic and b.atomic):
        return False
    wide = (GRID,) if between_blocks else (BLOCK, GRID)
    return (a.scope or default_scope(a.space)) in wide and (b.scope or default_scope(b.space)) in wide


@dataclass(eq=False)
class Assign:
    target: str
    value: Expr
    span: Span


@dataclass(eq=False)
class MemOp:
    """Evaluate accesses in order (reads already sit inside the expressions they feed)."""
    access: Access


@dataclass(eq=False)
class Barrier:
    scope: str                  # BLOCK, WARP or GRID
    spaces: frozenset[str]      # memory spaces it orders
    span: Span
    text: str = ""


@dataclass(eq=False)
class If:
    cond: Expr
    then: list["Stmt"]
    orelse: list["Stmt"]
    span: Span
    # A stated fact (`__builtin_assume(e)`, `assert(e)`: the rest of the block runs under it):
    # every thread satisfies it, so no thread takes the other way and it parts no threads.
    assumed: bool = False


@dataclass(eq=False)
class Loop:
    """`for (init; cond; update) body`; `while` has no init/update; cond None means forever."""
    init: list["Stmt"]
    cond: Expr | None
    update: list["Stmt"]
    body: list["Stmt"]
    span: Span
    id: int = 0


@dataclass(eq=False)
class Break:
    span: Span


@dataclass(eq=False)
class Continue:
    span: Span


@dataclass(eq=False)
class Return:
    span: Span


@dataclass(eq=False)
class Eval:
    """An expression evaluated for its reads only (e.g. a discarded call result)."""
    value: Expr
    span: Span


Stmt = Union[Assign, MemOp, Barrier, If, Loop, Break, Continue, Return, Eval]

# A device-scope fence (`__threadfence()`) is `Eval(Call(name, ()))` with one of these names: it
# synchronises no one and orders one thread's accesses, which the last-block pattern relies on.
FENCES = frozenset({"__threadfence", "__threadfence_system"})


def walk_stmts(stmts, into_loops: bool = True, updates: bool = False):
    """Every statement of a block, nested ones included (loop bodies only when asked, and their
    update clauses too with `updates`)."""
    for s in stmts:
        yield s
        if isinstance(s, If):
            yield from walk_stmts(s.then, into_loops, updates)
            yield from walk_stmts(s.orelse, into_loops, updates)
        elif into_loops and isinstance(s, Loop):
            yield from walk_stmts(s.body, into_loops, updates)
            if updates:
                yield from walk_stmts(s.update, into_loops, updates)


def accesses(stmts):
    """Every access site of a block, nested ones and those inside expressions included (a site
    may come more than once). Expressions share subterms (the front ends reuse a lowered value
    wherever the source names it again): each expression object is walked once, or a chain of
    reuses would be walked once per path through it."""
    seen: set[int] = set()
    for s in walk_stmts(stmts, updates=True):
        if isinstance(s, MemOp):
            yield s.access
            exprs = [s.access.offset, s.access.value]
        else:
            exprs = [getattr(s, "value", None), getattr(s, "cond", None)]
        stack = [e for e in exprs if e is not None]
        while stack:
            e = stack.pop()
            if id(e) in seen:
                continue
            seen.add(id(e))
            if isinstance(e, Read):
                yield e.access
                stack.append(e.access.offset)
            else:
                stack.extend(operands(e))


def _any_subterm(e, test) -> bool:
    """Does `test` hold of some subterm of `e` (itself included)? Each shared subterm once."""
    stack, seen = [e], set()
    while stack:
        x = stack.pop()
        if id(x) in seen:
            continue
        seen.add(id(x))
        if test(x):
            return True
        stack.extend(operands(x))
    return False


def reads_memory(e) -> bool:
    """Does an expression read memory (a `Read` anywhere inside it)?"""
    return _any_subterm(e, lambda x: isinstance(x, Read))


def reads_names(e, names) -> bool:
    """Does an expression read one of the variables `names`?"""
    return _any_subterm(e, lambda x: isinstance(x, Var) and x.name in names)


def per_kernel(fn):
    """`fn(kernel)` remembered for the last kernel asked, kept with the kernel and its body, whose
    identities say it is still the same kernel (a changed kernel is a copy, with a new body):
    several passes of one kernel ask, each answer a walk over the whole kernel."""
    memo: list = [None, None, None]

    @functools.wraps(fn)
    def cached(kernel):
        if memo[0] is not kernel or memo[1] is not kernel.body:
            memo[:] = [kernel, kernel.body, fn(kernel)]
        return memo[2]

    return cached


def per_node(limit: int):
    """`fn(node)` of one IR node or statement list, remembered by its identity (the node held, so
    its id is not reused meanwhile) for up to `limit` nodes: the analyses change no IR in place (a
    fix hint's re-analysis gets copies), and the passes of a kernel ask again and again."""
    def wrap(fn):
        memo: dict[int, tuple] = {}

        @functools.wraps(fn)
        def cached(node):
            hit = memo.get(id(node))
            if hit is not None and hit[0] is node:
                return hit[1]
            if len(memo) > limit:
                memo.clear()
            out = fn(node)
            memo[id(node)] = (node, out)
            return out

        return cached

    return wrap


def loaded_unchanged(kernel: "Kernel", o: Opaque) -> bool:
    """Whether an atomic's result is the element's one value: the atomic leaves it as it is (a load,
    a fetch-add of 0) and no atomic of the kernel changes its buffer."""
    return o.fetch is not None and o.fetch.atomic_op == "load" and not changed_atomically(kernel, o.fetch.buffer)


def ticket_holds(kernel: "Kernel", o: Opaque) -> bool:
    """Whether a fetch-and-add's result is a ticket: distinct from every other draw at its site.
    True when every atomic write that may reach the counter's element moves it the same way (a
    write at another constant offset of the buffer, `atomicOr(&bump.failed, f)` beside
    `atomicAdd(&bump.lines, 1)`, does not); a counter another site decrements, exchanges or
    stores atomically may hand one value out twice. (A plain write to it is a race with the draws,
    or ordered with them by a barrier: reported, or harmless.) An increment's and a range
    ticket's counter may be moved by both: each only moves it up."""
    if o.ticket is None or o.fetch is None:
        return False
    ops, op = atomic_writes_at(kernel, o.fetch), atomic_op_of(kernel, o.fetch)
    return ops == {op} and op != "rmw" or (op in GROWS and bool(ops) and ops <= GROWS)


GROWS = frozenset({"increment", "grow"})


def atomic_writes_at(kernel: "Kernel", acc: Access) -> set[str]:
    """The operations of the kernel's atomic writes that may change `acc`'s element: all of its
    buffer's where its offset is not a constant; otherwise those at an offset that is not a
    constant or whose constant bytes overlap its own. One not atomic with every thread that shares
    the memory (`atomic_among_all`) is "narrow": it may lose another block's update, and the
    element then need not move one way (two threads of one block may then draw one value)."""
    sites = _atomic_write_sites(kernel).get(acc.buffer, ())
    if isinstance(acc.offset, Const):
        lo, hi = acc.offset.value, acc.offset.value + acc.width
        sites = [x for x in sites if x[2] is None or (x[2] < hi and lo < x[2] + x[3])]
    return {op if among_all else "narrow" for op, among_all, _, _ in sites}


@per_kernel
def _atomic_write_sites(kernel: "Kernel") -> dict[str, set]:
    """Per buffer, (operation, whether it is atomic among all, constant offset or None, width) of
    each atomic write (a fetch-add of 0 changes nothing: not one)."""
    out: dict[str, set] = {}
    for acc in accesses(kernel.body):
        if acc.atomic and acc.is_write and acc.atomic_op != "load":
            at = acc.offset.value if isinstance(acc.offset, Const) else None
            out.setdefault(acc.buffer, set()).add((atomic_op_of(kernel, acc), atomic_among_all(acc), at, acc.width))
    return out


@per_kernel
def draw_loops(kernel: "Kernel") -> dict[int, "tuple[int, ...] | None"]:
    """Per atomic access id, the ids of the loops around it, outermost first (None for a site in
    two nests). A draw is named by these loops' iterations wherever its result is read, so that
    one thread's draws in two iterations have two names and one draw, read again in a later
    loop, keeps its one name (analysis/decision/tickets.py parts draws by them)."""
    out: dict[int, "tuple[int, ...] | None"] = {}

    def walk(stmts, stack: tuple) -> None:
        for s in stmts:
            if isinstance(s, MemOp) and s.access.atomic:
                out[s.access.id] = stack if out.get(s.access.id, stack) == stack else None
            elif isinstance(s, If):
                walk(s.then, stack)
                walk(s.orelse, stack)
            elif isinstance(s, Loop):
                walk(s.init, stack)
                walk(s.body, stack + (s.id,))
                walk(s.update, stack + (s.id,))
    walk(kernel.body, ())
    return out


@per_kernel
def ticket_draws(kernel: "Kernel") -> dict[str, Opaque]:
    """The kernel's fetch-and-adds that may be tickets, by `ticket_name` (what the solver and the
    replay call their results)."""
    out: dict[str, Opaque] = {}
    seen: set[int] = set()
    for s in walk_stmts(kernel.body, updates=True):
        if isinstance(s, MemOp):
            stack = [s.access.offset, s.access.value]
        else:
            stack = [getattr(s, "value", None), getattr(s, "cond", None)]
        while stack:
            e = stack.pop()
            if e is None or id(e) in seen:
                continue
            seen.add(id(e))
            if isinstance(e, Opaque) and e.ticket is not None:
                out[ticket_name(e)] = e
            stack.extend((e.access.offset,) if isinstance(e, Read) else operands(e))
    return out


def changed_atomically(kernel: "Kernel", buffer: str) -> bool:
    """Whether an atomic write of the kernel may change `buffer` (then two threads' atomic loads of
    one element at one point may differ; otherwise a plain write to it races with the loads)."""
    return bool(_atomic_writes(kernel).get(buffer))


def atomic_direction(kernel: "Kernel", buffer: str) -> int:
    """1 where every write of `buffer` is an atomic increment, -1 where every one is an atomic
    decrement, else 0. A thread's later atomic on an element of a buffer that moves one way sees
    at least (at most) what its own earlier atomic left there, whatever the other threads do: each
    write after its own in the element's modification order moves the value on the same way."""
    ops = _atomic_writes(kernel).get(buffer)
    if buffer in _plain_writes(kernel) or ops not in ({"increment"}, {"decrement"}):
        return 0
    return 1 if ops == {"increment"} else -1


def atomic_among_all(acc: Access) -> bool:
    """Whether an atomic is atomic with every thread that shares its memory (the grid's, for
    global memory; the block's otherwise). A narrower one may lose another block's update, and
    the element then need not move one way."""
    return acc.scope == GRID or (acc.space != GLOBAL and acc.scope == BLOCK)


@per_kernel
def _plain_writes(kernel: "Kernel") -> set[str]:
    """Buffers some write changes without an atomic among all (see `atomic_among_all`)."""
    return {acc.buffer for acc in accesses(kernel.body)
            if acc.is_write and acc.atomic_op != "load" and not (acc.atomic and atomic_among_all(acc))}


@per_kernel
def atomic_sites(kernel: "Kernel") -> frozenset[int]:
    """The ids of the kernel's atomic access sites (every solver encoder of a kernel asks)."""
    return frozenset(acc.id for acc in accesses(kernel.body) if acc.atomic)


@per_kernel
def _atomic_writes(kernel: "Kernel") -> dict[str, set[str]]:
    return {buf: {op for op, _, _, _ in sites} for buf, sites in _atomic_write_sites(kernel).items()}


def read_only_loads(kernel: "Kernel") -> dict[str, Access]:
    """Buffers no access of the kernel writes (distinct buffers do not alias: a stated
    assumption), each with its first read site. Every read of such a buffer at an address returns
    the same value, whatever the site, iteration or barrier interval: the analyses name it after
    that one site."""
    return dict(_read_only_loads(kernel))


@per_kernel
def _read_only_loads(kernel: "Kernel") -> dict[str, Access]:
    written, reads = set(), {}
    for acc in accesses(kernel.body):
        if acc.space == PRIVATE:
            continue
        if acc.is_write and acc.atomic_op != "load":   # a fetch-add of 0 reads, and writes nothing new
            written.add(acc.buffer)
        elif acc.buffer not in reads or acc.id < reads[acc.buffer].id:
            reads[acc.buffer] = acc
    return {b: site for b, site in reads.items() if b not in written}


@dataclass
class Buffer:
    name: str
    space: str
    elem_type: str
    elem_size: int
    size_bytes: int | None = None   # fixed-size arrays (shared, private); None for parameters
    # Declared shape, when known (TVM builds; WGSL and SPIR-V nested arrays): constant row strides
    # in elements, and the parameter holding the buffer's element offset. In-bounds accesses keep
    # each inner index below its stride. (The C family says its subscripts: ir.Access.bounds.)
    strides: tuple[int, ...] = ()
    # The innermost dimension whose extent is a scalar parameter, and the constant number of
    # elements below it: rows of `param * elements`, each in-bounds index inside one.
    param_row: tuple[str, int] | None = None
    offset_param: str | None = None
    # Scalar parameters among the declared extents (TVM builds): a row split by one of them keeps
    # its column inside that dimension.
    extent_params: frozenset[str] = frozenset()
    # Whether the language puts the buffer's start at offset 0 and its dimensions where `strides`
    # says: a declared shape (TVM's buffers), a binding (a Vulkan or WebGPU storage buffer, also
    # runtime-sized: `array<array<f32, 3>>` has rows of 3), an OpenCL `__global` argument (a
    # cl_mem's start). An access outside is undefined (or, in WGSL, not the element meant): a
    # collision that needs one is the `out-of-bounds` finding, not a race. A raw CUDA or Metal
    # pointer has no shape: it may point into an array, and any offset, negative ones included,
    # may be its own.
    declared: bool = False
    # The shape is the host's (TVM's buffers, from the build's host code): accesses inside it are
    # a stated assumption there (`-v` lists the pairs apart only by it), not an out-of-bounds
    # finding: the host binds the kernel's tensors, and an index outside needs a launch parameter
    # (a page id) no host passes.
    host_shape: bool = False
    display: str | None = None      # the name users know (TVM's buffer `S` for the pointer `S_ptr`)
    # What every finding on this buffer says of it (a front end's modelling choice the reader
    # must weigh: SPIR-V's buffer_reference memory, reached through addresses it does not know).
    note: str = ""
    # The extent of the last axis of a declared shape of two or more dimensions (an int, or the
    # scalar parameter holding it): the axis buffer contracts speak of (analysis/stated/contracts.py).
    last_extent: int | str | None = None

    @property
    def bounded(self) -> bool:
        """Accesses may be assumed inside it: a declared shape or a fixed size."""
        return self.declared or bool(self.size_bytes)


@dataclass
class Kernel:
    name: str
    file: str
    lang: str
    body: list[Stmt]
    buffers: dict[str, Buffer]
    params: list[str]                      # scalar parameters, in order
    warp_size: int = 32
    # Subgroups (Vulkan's, WebGPU's) read as this kernel's warps (frontend/subgroups.py): the scalar
    # parameter holding their size, which --scalar binds and `warp_size` follows; None when the
    # kernel reads no subgroup builtin. It rests on a stated assumption: each subgroup is a
    # contiguous range of the linear local invocation index.
    subgroup_size_param: str | None = None
    # Launch extents: name ("tid.x", "bid.x", ...) -> int, or None when symbolic.
    block_dim: dict[str, int | None] = field(default_factory=dict)
    grid_dim: dict[str, int | None] = field(default_factory=dict)
    # A symbolic grid extent the launch computes as a kernel parameter (TVM: `blockIdx.x` bound to
    # `cse_v11`): dimension -> parameter name. The blocks then range below that parameter.
    grid_params: dict[str, str] = field(default_factory=dict)
    bindings: dict[str, int] = field(default_factory=dict)   # scalar parameters fixed by the user
    # Parameters the launching code computes from other values (TVM's host `cse_v` bindings).
    definitions: dict[str, "Expr"] = field(default_factory=dict)
    # The values a scalar parameter's type allows, [lo, hi], where they are not a 32-bit int's
    # (an `unsigned int n` is never negative).
    param_ranges: dict[str, tuple[int, int]] = field(default_factory=dict)
    source_lines: list[str] = field(default_factory=list)
    # The text of the sources a compiled kernel came from (SPIR-V's OpSource), by file name.
    origin_lines: dict[str, list[str]] = field(default_factory=dict)
    # The block size the source bounds (CUDA's `__launch_bounds__(N)`, Metal's
    # `[[max_total_threads_per_threadgroup(N)]]`): blockDim.x * blockDim.y * blockDim.z <= N.
    max_threads_per_block: int | None = None
    # Launch extents set to 1 because the kernel never reads them (`blockDim.z`), not by the launch.
    defaulted_dims: tuple[str, ...] = ()
    # Facts the user states (`--assume 'H >= blockDim.y'`, `// kernelrace: assume ...`): (text, expression).
    assumptions: list[tuple[str, "Expr"]] = field(default_factory=list)
    # A kernel the front end could not lower (one of several in its file): where, and what construct.
    # It is reported `unknown` and not analysed; the file's other kernels are.
    unsupported: "tuple[Span, str] | None" = None
    # The most threads a block of this kernel may have (`__launch_bounds__(N)`), when the source says.
    max_threads_per_block: int | None = None
    # The launch in the file's host code the extents come from: (host line, block (x, y, z), grid
    # (x, y, z) or None); shown with the kernel's assumptions while the extents are still its.
    host_launch: "tuple[int, tuple, tuple | None] | None" = None

    def line(self, n: int) -> str:
        return self.source_lines[n - 1] if 0 < n <= len(self.source_lines) else ""

    def origin_line(self, span: "Span | None") -> str:
        if span is None:
            return ""
        lines = self.origin_lines.get(span.file, [])
        return lines[span.line - 1].strip() if 0 < span.line <= len(lines) else ""


# ---------- which signed fetch-adds ("add") grow their counter ----------
# Which fetch-adds of a signed computed amount grow their counter (frontend/atomics.py's "add").
#
# A signed amount may be negative and move the counter down: such a fetch-add is a read-modify-write
# whose result is the thread's own value. It grows the counter (a range ticket's draw, `ir.GROWS`)
# only where the IR proves its amount in [0, 2**31) in every thread and every execution: built from
# constants, thread and block indices and extents, bit counts, comparisons and parameters whose type
# allows no negative value, by operations that keep a non-negative value non-negative (+, *, /, %,
# >>, &, |, min, max, a selection), or from local variables assigned before the atomic on every way
# to it whose every assignment in the kernel is such a value. A read of memory (a shared counter's
# value, a host's buffer) is never proven: its contents may be anything. The bound below 2**31 keeps
# the amount inside a signed 32-bit counter's range, where the IR's integer is what the atomic adds.
#
# Example: `atomicAdd(&count, __popc(mask))` on an `int` counter, GLSL's `atomicAdd(c, bitCount(m))`,
# WGSL's `atomicAdd(&c, i32(countOneBits(m)))` grow; `atomicAdd(tail, tot_sum)` with `tot_sum` read
# from shared memory (Parboil's bfs) does not.
_AMOUNT_LIMIT = 1 << 31
# The most threads a block has on every target (solver._MAX_BLOCK), the most blocks a dimension.
_MAX_BLOCK, _MAX_GRID = 1024, (1 << 31) - 1
_BIT_COUNTS = {"__popc": 32, "__popcll": 64, "popcount": 64, "popc": 64, "countOneBits": 64,
              "bitCount": 64, "OpBitCount": 64}
_COMPARISONS = frozenset({"<", "<=", ">", ">=", "==", "!=", "&&", "||"})


def _signed_grows(kernel: "Kernel", acc: Access) -> bool:
    """Whether the signed fetch-add `acc` ("add") adds an amount the IR proves in [0, 2**31)."""
    amount = _signed_amounts(kernel).get(acc.id)
    known = _assigned_before(kernel).get(acc.id)
    return amount is not None and known is not None and _AmountBounds(kernel).of(amount, known) is not None


@per_kernel
def _signed_amounts(kernel: "Kernel") -> dict[int, Expr]:
    """Per signed fetch-add's access id, its amount (its result's `amount`; one whose result the
    IR drops has none: not proven)."""
    out: dict[int, Expr] = {}
    for o in ticket_draws(kernel).values():
        if o.fetch is not None and o.fetch.atomic_op == "add" and o.amount is not None:
            out[o.fetch.id] = o.amount
    return out


@per_kernel
def _var_assignments(kernel: "Kernel") -> dict[str, list[tuple[Expr, frozenset[str]]]]:
    """Per variable, each assignment's value and the variables assigned on every way to it."""
    out: dict[str, list] = {}
    known = _assigned_before(kernel)
    for key, (target, value) in _assign_stmts(kernel).items():
        out.setdefault(target, []).append((value, known[key]))
    return out


@per_kernel
def _assign_stmts(kernel: "Kernel") -> dict[int, tuple[str, Expr]]:
    return {id(s): (s.target, s.value) for s in _every_stmt(kernel.body) if isinstance(s, Assign)}


def _every_stmt(stmts):
    for s in stmts:
        yield s
        if isinstance(s, If):
            yield from _every_stmt(s.then)
            yield from _every_stmt(s.orelse)
        elif isinstance(s, Loop):
            yield from _every_stmt(s.init)
            yield from _every_stmt(s.body)
            yield from _every_stmt(s.update)


@per_kernel
def _assigned_before(kernel: "Kernel") -> dict[int, frozenset[str]]:
    """Per atomic access id and per assignment (its `id`), the variables assigned on every way
    from the kernel's start to it (structured code: an earlier statement of an enclosing block, a
    loop's init)."""
    out: dict[int, frozenset[str]] = {}

    def walk(stmts, known: frozenset[str]) -> frozenset[str]:
        for s in stmts:
            if isinstance(s, Assign):
                out[id(s)] = known
                known = known | {s.target}
            elif isinstance(s, MemOp) and s.access.atomic:
                seen = out.get(s.access.id)
                out[s.access.id] = known if seen is None else seen & known
            elif isinstance(s, If):
                then, orelse = walk(s.then, known), walk(s.orelse, known)
                known = then & orelse
            elif isinstance(s, Loop):
                known = walk(s.init, known)
                walk(s.body, known)
                walk(s.update, known)   # a `continue` skips the rest of the body
        return known
    walk(kernel.body, frozenset())
    return out


class _AmountBounds:
    """An upper bound of a non-negative IR value below 2**31, or None where none is proven."""

    def __init__(self, kernel: "Kernel"):
        self.kernel = kernel
        self.defs = _var_assignments(kernel)
        self.vars: dict[str, int | None] = {}

    def of(self, e, known: frozenset[str]) -> int | None:
        """`e`'s bound where the variables `known` are assigned on every way to it."""
        b = self._bound(e, known)
        return b if b is not None and 0 <= b < _AMOUNT_LIMIT else None

    def _bound(self, e, known: frozenset[str]) -> int | None:
        if isinstance(e, Const):
            return e.value if isinstance(e.value, int) and 0 <= e.value < _AMOUNT_LIMIT else None
        if isinstance(e, Builtin):
            return _builtin_bound(e.name)
        if isinstance(e, Param):
            lo, hi = self.kernel.param_ranges.get(e.name, (-1, 0))
            return hi if lo >= 0 and hi < _AMOUNT_LIMIT else None
        if isinstance(e, Var):
            return self._var(e.name) if e.name in known else None   # else it may hold anything
        if isinstance(e, BinOp):
            return self._binop(e, known)
        if isinstance(e, UnOp):
            return 1 if e.op == "!" else None
        if isinstance(e, Select):
            a, b = self.of(e.a, known), self.of(e.b, known)
            return None if a is None or b is None else max(a, b)
        if isinstance(e, Call):
            if e.fn in _BIT_COUNTS:
                return _BIT_COUNTS[e.fn]
            args = [self.of(a, known) for a in e.args]
            if e.fn == "min" and len(args) == 2:
                known = [a for a in args if a is not None]
                return min(known) if len(known) == 2 else None
            if e.fn == "max" and len(args) == 2 and None not in args:
                return max(args)
        return None

    def _var(self, name: str) -> int | None:
        if name not in self.defs:
            return None
        if name in self.vars:
            return self.vars[name]
        self.vars[name] = None   # a variable its own assignments read (a loop's sum): not proven
        bounds = [self.of(v, known) for v, known in self.defs[name]]
        out = None if None in bounds else max(bounds)
        self.vars[name] = out
        return out

    def _binop(self, e: BinOp, known: frozenset[str]) -> int | None:
        if e.op in _COMPARISONS:
            return 1
        a, b = self.of(e.a, known), self.of(e.b, known)
        if e.op == "&":   # one non-negative operand clears the sign
            known = [x for x in (a, b) if x is not None]
            return min(known) if known else None
        if a is None or b is None:
            return None
        if e.op == "+":
            return a + b
        if e.op == "*":
            return a * b
        if e.op in ("/", ">>"):
            return a
        if e.op == "%":
            return min(a, max(b - 1, 0))
        if e.op == "|":
            return (1 << max(a, b).bit_length()) - 1
        return None


def _builtin_bound(name: str) -> int | None:
    if name.startswith(("tid.", "bdim.")) or name in ("lane", "warp", "linear_tid"):
        return _MAX_BLOCK
    if name.startswith(("bid.", "gdim.")):
        return _MAX_GRID
    return None
