"""Brute force against what kernelrace claims of atomic results, in every dialect (issue 43).

Random small kernels draw from one or two counters (a global buffer, or the block's shared,
threadgroup or workgroup memory) with fetch-add, fetch-sub and atomic loads, some of them
block-scoped, and use the values they draw as indices and in guards of stores to a global buffer
`dst`, and of reads of it (`sink[gid] = dst[i]`). Each kernel is emitted in CUDA, OpenCL C, Metal,
WGSL and GLSL (compiled by kernelrace's own glslang path), and judged exactly by an oracle: every
thread of the launch (at most four) is run on every interleaving of the atomic operations, with
every initial value of the counters from a small set, and a buffer is racy when in some
interleaving two threads touch one element of it, at least one writing, with values that differ
or one a read (no barriers in these kernels), and both threads stay inside the buffers in that
interleaving: where `dst` starts at its binding (OpenCL `__global` arguments, GLSL and WGSL storage
buffers: BOUNDED), a thread that touches a negative element of it leaves the buffer, undefined
behaviour, and a collision of such a thread (or at a negative element) must be an `out-of-bounds`
finding instead, as kernelrace reports it (ir.Buffer.declared; docs/rules/out-of-bounds.md). A global counter that a block-scoped atomic touches
from two blocks is racy itself, where one of the two changes it (an add of zero that races with
another is a race of no consequence: either verdict is accepted).

kernelrace (in-process) checks each kernel twice: with the launch and the parameter `P` given
(`--block-dim`, `--grid-dim`, `--define`), where a buffer the oracle finds racy must carry a race
finding, and a race finding on a buffer the oracle finds clean is a false alarm (unless the oracle
finds the race once counters may start anywhere in a wider range: the analysis takes a counter's
initial value as any integer; judged on the whole launch, and on the finding's two blocks alone,
whose runs are runs of the whole launch with the other blocks after them, and whose fewer counter
instances afford the wider range) and its witness must be one of the oracle's collisions; and with the
launch and `P` symbolic, where only a missed race counts (a kernel that reads no block index, or
no thread index, is launched with one block, or one thread per block, there: a stated assumption,
so it is judged so).

    python benchmarks/atomic_campaign.py --kernels N --seed S [--start I] [--jobs J]
        [--dialects cuda,opencl,metal,wgsl,glsl] [--modes concrete,symbolic] [--kernel-timeout T]
        [--shrink-seconds T] [--save-failures DIR] [--log FILE] [--progress N]

Deterministic in its seed: kernel i is drawn by `random.Random(f"{seed}:{i}")`. A failure is
shrunk greedily (statements dropped, expressions simplified) against the same failure and
printed as the emitted source, labelled with what explains it where the harness can tell (a
counter no atomic changes, collisions that all store one value, two blocks' block-scoped
updates); --save-failures writes it. tests/test_atomic_campaign.py runs a pinned slice.
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import math
import multiprocessing
import random
import signal
import sys
import tempfile
import threading
import time
import traceback
from collections import Counter as Tally
from dataclasses import dataclass, field, replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from analyzer.errors import KernelraceError  # noqa: E402
from analyzer.pipeline import Options, check_text, read_source  # noqa: E402

DIALECTS = ("cuda", "opencl", "metal", "wgsl", "glsl")
SUFFIX = {"cuda": ".cu", "opencl": ".cl", "metal": ".metal", "wgsl": ".wgsl", "glsl": ".comp"}
GLOBAL, SHARED = "global", "shared"
RACE_RULES = frozenset({"write-after-write", "read-after-write", "write-after-read"})
OUT_OF_BOUNDS = "out-of-bounds"
# The dialects whose `dst` starts where its binding does, so that a negative element is outside
# it (kernelrace's ir.Buffer.declared; tests/test_atomic_campaign.py checks the two agree). A CUDA
# or Metal pointer argument may point into the middle of an allocation.
BOUNDED = frozenset({"opencl", "wgsl", "glsl"})
# (threads per block, blocks) along x: at most four threads in all.
LAUNCHES = ((2, 1), (3, 1), (4, 1), (1, 2), (2, 2), (1, 3), (1, 4))
INITS = (-3, 0, 2)                 # a counter's initial values the oracle tries
WIDE_INITS = tuple(range(-7, 8))   # ... before it calls a finding a false alarm: these, or as many
FAR = 64                           # a witness's element past what those initial values reach
WIDE_STATES = 100_000              # as keep the oracle's states about under this (wide_inits)
PARAMS = (0, 1, 3)                 # values of the scalar parameter P
STEPS = (1, 2, -1, 0)
MAX_ATOMICS = 2                    # atomic statements in a kernel: at most two per thread
KERNEL_TIMEOUT_S = 10.0
HARD_TIMEOUT_FACTOR = 3

# ---------------------------------------------------------------- kernels


@dataclass(frozen=True)
class Lin:
    """sum(coeff * atom) + const, over atoms "tid", "bid", "P" and draws "t0", "t1"; over 2 (C's
    truncating division) when `halve`."""
    terms: tuple               # ((atom, coeff), ...), coefficients non-zero
    const: int = 0
    halve: bool = False


@dataclass(frozen=True)
class Counter:
    name: str
    space: str                 # GLOBAL (a buffer of its own) or SHARED (the block's)


@dataclass(frozen=True)
class Draw:
    var: str                   # t0, t1: the thread's local it goes to
    counter: str
    op: str                    # add | sub | load
    step: int = 0              # add and sub
    block_scope: bool = False  # atomic within the block only (CUDA _block, OpenCL/SPIR-V work-group scope)
    spelling: int = 0          # CUDA's load: atomicAdd(c, 0) or atomicOr(c, 0)


@dataclass(frozen=True)
class Store:
    index: Lin                 # dst[index] = value
    value: Lin


@dataclass(frozen=True)
class Read:
    index: Lin                 # sink[gid] = dst[index]


@dataclass(frozen=True)
class If:
    left: Lin                  # if (left < right) { body }
    right: Lin
    body: tuple


@dataclass(frozen=True)
class Kernel:
    block: int
    grid: int
    counters: tuple            # Counter, ...
    body: tuple
    p: int                     # the value of P in the run with the launch given

    def uses(self, atom: str) -> bool:
        return any(atom in (a for a, _ in lin.terms) for lin in lins(self.body))

    def draws(self) -> list[Draw]:
        return [s for s in walk(self.body) if isinstance(s, Draw)]

    def reads_bid(self) -> bool:
        return self.uses("bid") or any(isinstance(s, Read) for s in walk(self.body))

    def reads_tid(self) -> bool:
        return self.uses("tid") or any(isinstance(s, Read) for s in walk(self.body))


def walk(body):
    for s in body:
        yield s
        if isinstance(s, If):
            yield from walk(s.body)


def lins(body):
    for s in walk(body):
        if isinstance(s, Store):
            yield from (s.index, s.value)
        elif isinstance(s, Read):
            yield s.index
        elif isinstance(s, If):
            yield from (s.left, s.right)


# ---------------------------------------------------------------- drawing


def draw_lin(rng: random.Random, draws: list[str], index: bool) -> Lin:
    atoms = list(draws) * 3 + ["tid", "tid", "bid", "P"]
    n = rng.choice((1, 1, 2)) if index else 1
    terms = {}
    for atom in rng.sample(atoms, min(n, len(atoms))):
        terms[atom] = rng.choice((1, 1, 1, 2, -1))
    const = rng.choice((0, 0, 0, 1, -1, 2)) if index else 0
    return Lin(tuple(sorted(terms.items())), const, index and rng.random() < 0.15)


def draw_value(rng: random.Random, draws: list[str]) -> Lin:
    choice = rng.choice(["tid", "bid", "const", "const"] + draws * 2)
    return Lin((), 7) if choice == "const" else Lin(((choice, 1),))


def draw_kernel(rng: random.Random) -> Kernel:
    block, grid = rng.choice(LAUNCHES)
    counters = tuple(Counter(f"c{i}", rng.choice((GLOBAL, GLOBAL, SHARED))) for i in range(rng.choice((1, 1, 2))))
    atomics = [rng.randint(1, MAX_ATOMICS)]   # left to draw
    names = iter(("t0", "t1"))

    def draw(visible: list[str]) -> Draw:
        c = rng.choice(counters)
        op = rng.choice(("add", "add", "sub", "load", "load"))
        step = rng.choice(STEPS) if op != "load" else 0
        scoped = c.space == GLOBAL and rng.random() < 0.2
        atomics[0] -= 1
        var = next(names)
        visible.append(var)
        return Draw(var, c.name, op, step, scoped, rng.randint(0, 1))

    def statements(visible: list[str], n: int, nested: bool) -> tuple:
        out = []
        for _ in range(n):
            kinds = ["store", "store", "store", "read"] + ["draw", "draw"] * (atomics[0] > 0) + ["if"] * (not nested)
            k = rng.choice(kinds)
            if k == "draw":
                out.append(draw(visible))
            elif k == "store":
                out.append(Store(draw_lin(rng, visible, True), draw_value(rng, visible)))
            elif k == "read":
                out.append(Read(draw_lin(rng, visible, True)))
            else:
                if visible and rng.random() < 0.7:
                    left = Lin(((rng.choice(visible), 1),))
                    right = Lin((("P", 1),)) if rng.random() < 0.6 else Lin((), rng.choice((0, 1, 2)))
                else:
                    left, right = Lin((("tid", 1),)), Lin((), rng.choice((1, 2)))
                out.append(If(left, right, statements(list(visible), rng.choice((1, 2)), True)))
        return tuple(out)

    visible: list[str] = []
    body = []
    while atomics[0] > 0:   # the first statements draw, so that what follows can use the draws
        body.append(draw(visible))
        if rng.random() < 0.5:
            break
    body += statements(visible, rng.choice((1, 2, 3)), False)
    if not any(isinstance(s, (Store, Read)) for s in walk(body)):
        body.append(Store(draw_lin(rng, visible, True), draw_value(rng, visible)))
    return Kernel(block, grid, counters, tuple(body), rng.choice(PARAMS))


# ---------------------------------------------------------------- emitting


class Unexpressible(Exception):
    """The kernel uses what the dialect cannot say (a block-scoped atomic on device memory in
    Metal or WGSL)."""


@dataclass
class Emitted:
    dialect: str
    text: str
    lines: dict                # source line -> the statement on it


def _lin(lin: Lin, atom) -> str:
    parts = []
    for a, c in lin.terms:
        t = atom(a)
        parts.append(t if c == 1 else f"-{t}" if c == -1 else f"{c} * {t}")
    if lin.const or not parts:
        parts.append(str(lin.const))
    text = " + ".join(parts).replace("+ -", "- ")
    return f"({text}) / 2" if lin.halve else text


class Syntax:
    """How one dialect spells a kernel's pieces."""

    def __init__(self, dialect: str, kernel: Kernel):
        self.d, self.k = dialect, kernel
        self.space = {c.name: c.space for c in kernel.counters}

    def atom(self, a: str) -> str:
        if a in ("tid", "bid"):
            return {"cuda": {"tid": "(int)threadIdx.x", "bid": "(int)blockIdx.x"},
                    "opencl": {"tid": "(int)get_local_id(0)", "bid": "(int)get_group_id(0)"},
                    "metal": {"tid": "(int)tid.x", "bid": "(int)bid.x"},
                    "wgsl": {"tid": "i32(lid.x)", "bid": "i32(wid.x)"},
                    "glsl": {"tid": "int(gl_LocalInvocationID.x)", "bid": "int(gl_WorkGroupID.x)"}}[self.d][a]
        return a

    def gid(self) -> str:
        return {"cuda": "(int)(blockIdx.x * blockDim.x + threadIdx.x)", "opencl": "(int)get_global_id(0)",
                "metal": "(int)gid", "wgsl": "i32(gid.x)", "glsl": "int(gl_GlobalInvocationID.x)"}[self.d]

    def atomic(self, s: Draw) -> str:
        c, shared, d = s.counter, self.space[s.counter] == SHARED, self.d
        scoped = s.block_scope and not shared
        if scoped and d in ("metal", "wgsl"):
            raise Unexpressible("a block-scoped atomic on device memory")
        if d == "cuda":
            ptr = f"&{c}" if shared else c
            sfx = "_block" if scoped else ""
            if s.op == "load":
                return f"atomic{('Add', 'Or')[s.spelling]}{sfx}({ptr}, 0)"
            return f"atomic{'Add' if s.op == 'add' else 'Sub'}{sfx}({ptr}, {s.step})"
        if d == "opencl":
            ptr = f"&{c}" if shared else c
            if scoped:
                order = "memory_order_relaxed, memory_scope_work_group"
                if s.op == "load":
                    return f"atomic_load_explicit({ptr}, {order})"
                return f"atomic_fetch_{s.op}_explicit({ptr}, {s.step}, {order})"
            return f"atomic_load({ptr})" if s.op == "load" else f"atomic_fetch_{s.op}({ptr}, {s.step})"
        if d == "metal":
            ptr = f"&{c}" if shared else c
            if s.op == "load":
                return f"atomic_load_explicit({ptr}, memory_order_relaxed)"
            return f"atomic_fetch_{s.op}_explicit({ptr}, {s.step}, memory_order_relaxed)"
        if d == "wgsl":
            if s.op == "load":
                return f"atomicLoad(&{c})"
            return f"atomic{'Add' if s.op == 'add' else 'Sub'}(&{c}, {s.step})"
        # GLSL: no atomicSub; the memory-scope overloads of GL_KHR_memory_scope_semantics
        step = s.step if s.op == "add" else -s.step
        scope = "gl_ScopeWorkgroup" if scoped or shared else "gl_ScopeDevice"
        sem = "gl_StorageSemanticsShared" if shared else "gl_StorageSemanticsBuffer"
        if s.op == "load":
            return f"atomicLoad({c}, {scope}, {sem}, gl_SemanticsRelaxed)"
        if scoped:
            return f"atomicAdd({c}, {step}, {scope}, {sem}, gl_SemanticsRelaxed)"
        return f"atomicAdd({c}, {step})"

    def prologue(self) -> list[str]:
        k, d = self.k, self.d
        glob = [c.name for c in k.counters if c.space == GLOBAL]
        shared = [c.name for c in k.counters if c.space == SHARED]
        p = k.uses("P")
        if d == "cuda":
            args = ["int* dst", "int* sink"] + [f"int* {c}" for c in glob] + ["int P"] * p
            return ([f'extern "C" __global__ void k({", ".join(args)}) {{']
                    + [f"    __shared__ int {c};" for c in shared])
        if d == "opencl":
            args = ["__global int* dst", "__global int* sink"] + [f"__global atomic_int* {c}" for c in glob]
            return ([f"__kernel void k({', '.join(args + ['int P'] * p)}) {{"]
                    + [f"    __local atomic_int {c};" for c in shared])
        if d == "metal":
            bufs = ["int* dst", "int* sink"] + [f"atomic_int* {c}" for c in glob]
            args = [f"device {b} [[buffer({i})]]" for i, b in enumerate(bufs)]
            args += [f"constant int& P [[buffer({len(bufs)})]]"] * p
            args += ["uint3 tid [[thread_position_in_threadgroup]]", "uint3 bid [[threadgroup_position_in_grid]]",
                     "uint gid [[thread_position_in_grid]]"]
            return (["#include <metal_stdlib>", "using namespace metal;", f"kernel void k({', '.join(args)}) {{"]
                    + [f"    threadgroup atomic_int {c};" for c in shared])
        if d == "wgsl":
            lines = [f"@group(0) @binding({i}) var<storage, read_write> {b}: {t};" for i, (b, t) in enumerate(
                [("dst", "array<i32>"), ("sink", "array<i32>")] + [(c, "atomic<i32>") for c in glob])]
            lines += [f"var<workgroup> {c}: atomic<i32>;" for c in shared] + ["override P: i32;"] * p
            return lines + [f"@compute @workgroup_size({k.block})",
                            "fn k(@builtin(local_invocation_id) lid: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>,",
                            "     @builtin(global_invocation_id) gid: vec3<u32>) {"]
        lines = ["#version 450", "#extension GL_KHR_memory_scope_semantics : require",
                 f"layout(local_size_x = {k.block}, local_size_y = 1, local_size_z = 1) in;",
                 "layout(std430, binding = 0) buffer Bdst { int dst[]; };",
                 "layout(std430, binding = 1) buffer Bsink { int sink[]; };"]
        lines += [f"layout(std430, binding = {2 + i}) buffer B{c} {{ int {c}; }};" for i, c in enumerate(glob)]
        lines += ["layout(push_constant) uniform Params { int P; };"] * p
        return lines + [f"shared int {c};" for c in shared] + ["void main() {"]


def emit(kernel: Kernel, dialect: str, header: tuple = ()) -> Emitted:
    """The kernel's source in `dialect`, after the comment lines `header`; Unexpressible if the
    dialect cannot say it."""
    syn = Syntax(dialect, kernel)
    out = list(header) + syn.prologue()
    lines: dict[int, object] = {}
    decl = "let" if dialect == "wgsl" else "int"

    def block(stmts, depth):
        for s in stmts:
            pad = "    " * depth
            lin = lambda x: _lin(x, syn.atom)  # noqa: E731
            if isinstance(s, Draw):
                out.append(f"{pad}{decl} {s.var} = {syn.atomic(s)};")
            elif isinstance(s, Store):
                out.append(f"{pad}dst[{lin(s.index)}] = {lin(s.value)};")
            elif isinstance(s, Read):
                out.append(f"{pad}sink[{syn.gid()}] = dst[{lin(s.index)}];")
            else:
                out.append(f"{pad}if ({lin(s.left)} < {lin(s.right)}) {{")
                lines[len(out)] = s
                block(s.body, depth + 1)
                out.append(f"{pad}}}")
                continue
            lines[len(out)] = s

    block(kernel.body, 1)
    out.append("}")
    return Emitted(dialect, "\n".join(out) + "\n", lines)


# ---------------------------------------------------------------- the oracle


class _Need(Exception):
    """A thread reached an atomic it has no drawn value for yet."""

    def __init__(self, draw: Draw):
        self.draw = draw


@dataclass(frozen=True)
class Touch:
    """One access of a thread: to `dst` (element, value; value None for a read) or a counter."""
    buffer: str
    element: int
    write: bool
    value: object
    thread: int                # global id
    block: int
    scope: str = ""            # counters: "block" or "grid"
    changes: bool = False      # counters: whether the write changes the value


def c_div2(v: int) -> int:
    return abs(v) // 2 * (1 if v >= 0 else -1)


def run_thread(kernel: Kernel, block: int, tid: int, p: int, drawn: tuple, load_writes: bool = False) -> list[Touch]:
    """The thread's accesses, its atomics returning `drawn` in order; _Need at the first atomic
    past them. With `load_writes` an atomic load is a read-modify-write that changes nothing
    (CUDA's `atomicAdd(c, 0)`)."""
    env = {"tid": tid, "bid": block, "P": p}
    g = block * kernel.block + tid
    spaces = {c.name: c.space for c in kernel.counters}
    out: list[Touch] = []
    k = [0]

    def val(lin: Lin) -> int:
        v = sum(c * env[a] for a, c in lin.terms) + lin.const
        return c_div2(v) if lin.halve else v

    def block_(stmts):
        for s in stmts:
            if isinstance(s, Draw):
                if k[0] == len(drawn):
                    raise _Need(s)
                env[s.var] = drawn[k[0]]
                k[0] += 1
                write = s.op != "load" or load_writes
                scope = "block" if s.block_scope or spaces[s.counter] == SHARED else "grid"
                out.append(Touch(s.counter, block if spaces[s.counter] == SHARED else 0, write, None, g, block,
                                 scope, s.op != "load" and s.step != 0))
            elif isinstance(s, Store):
                out.append(Touch("dst", val(s.index), True, val(s.value), g, block))
            elif isinstance(s, Read):
                out.append(Touch("dst", val(s.index), False, None, g, block))
            elif val(s.left) < val(s.right):
                block_(s.body)

    block_(kernel.body)
    return out


def apply(draw: Draw, old: int) -> int:
    return old + draw.step if draw.op == "add" else old - draw.step if draw.op == "sub" else old


def executions(kernel: Kernel, grid: int, p: int, inits, load_writes: bool = False,
               free: frozenset = frozenset(), blocks: tuple | None = None) -> dict:
    """Every outcome (the values each thread draws) of every interleaving of the threads' atomics,
    from every initial value in `inits` of each counter instance (one per block for a shared
    counter), with each thread's accesses; states met twice are explored once. A draw from a
    counter in `free` is any value in `inits`, whatever the others drew (kernelrace's model of
    an atomic load: the thread's own value). With `blocks`, those blocks of the grid alone run."""
    threads = [(b, t) for b in (range(grid) if blocks is None else blocks) for t in range(kernel.block)]
    spaces = {c.name: c.space for c in kernel.counters}
    runs: dict = {}

    def step(i: int, drawn: tuple):
        """(the next atomic, None) or (None, the accesses) of thread i having drawn `drawn`."""
        key = (i, drawn)
        if key not in runs:
            b, t = threads[i]
            try:
                runs[key] = (None, run_thread(kernel, b, t, p, drawn, load_writes))
            except _Need as need:
                runs[key] = (need.draw, None)
        return runs[key]

    outcomes: dict = {}
    seen: set = set()
    stack = [(tuple(() for _ in threads), ())]
    while stack:
        state = stack.pop()
        if state in seen:
            continue
        seen.add(state)
        drawn, counters = state
        values = dict(counters)
        finished = True
        for i in range(len(threads)):
            d, _ = step(i, drawn[i])
            if d is None:
                continue
            finished = False
            inst = ((d.counter, i, len(drawn[i])) if d.counter in free
                    else (d.counter, threads[i][0] if spaces[d.counter] == SHARED else -1))
            for old in ([values[inst]] if inst in values else inits):
                nv = dict(values)
                nv[inst] = apply(d, old)
                stack.append((drawn[:i] + (drawn[i] + (old,),) + drawn[i + 1:], tuple(sorted(nv.items()))))
        if finished and drawn not in outcomes:
            outcomes[drawn] = [x for i in range(len(threads)) for x in step(i, drawn[i])[1]]
    return outcomes


@dataclass
class Verdict:
    """The oracle on one launch and value of P: per buffer, a collision that makes it racy; the
    buffers with harmless collisions only; every colliding (buffer, element, pair of threads).
    `outside` and `outside_collisions` hold the collisions of a thread that leaves `dst` (bounded
    dialects only): out-of-bounds, not races."""
    racy: dict = field(default_factory=dict)
    benign: set = field(default_factory=set)
    collisions: set = field(default_factory=set)
    outside: dict = field(default_factory=dict)
    outside_collisions: set = field(default_factory=set)


def judge(kernel: Kernel, grid: int, p: int, inits=INITS, verdict: Verdict | None = None,
          load_writes: bool = False, free: frozenset = frozenset(), blocks: tuple | None = None,
          bounded: bool = False) -> Verdict:
    """The oracle's verdict; with `blocks`, on those blocks of the grid alone: what they do is what
    they do in some run of the whole grid (the other blocks may run after them), so a collision
    found so is one of the whole launch's. With `bounded`, `dst` starts at element 0: a collision
    of a thread that touches a negative element in that run is out-of-bounds."""
    v = verdict or Verdict()
    for drawn, touches in executions(kernel, grid, p, inits, load_writes, free, blocks).items():
        leaves = {x.thread for x in touches if bounded and x.buffer == "dst" and x.element < 0}
        by_place: dict = {}
        for x in touches:
            by_place.setdefault((x.buffer, x.element), []).append(x)
        for (buf, elem), xs in by_place.items():
            for a, b in itertools.combinations(xs, 2):
                if a.thread == b.thread or not (a.write or b.write):
                    continue
                if buf == "dst":
                    harmful = not (a.write and b.write) or a.value != b.value
                else:   # a counter: atomics race only across blocks, where one is block-scoped
                    if a.block == b.block or (a.scope == "grid" and b.scope == "grid"):
                        continue
                    harmful = a.changes or b.changes
                if a.thread in leaves or b.thread in leaves:
                    v.outside_collisions.add((buf, elem, frozenset((a.thread, b.thread))))
                    if harmful:
                        v.outside.setdefault(buf, (a, b, drawn))
                    continue
                v.collisions.add((buf, elem, frozenset((a.thread, b.thread))))
                if harmful:
                    v.racy.setdefault(buf, (a, b, drawn))
                else:
                    v.benign.add(buf)
    v.benign -= set(v.racy)
    return v


def judge_all(kernel: Kernel, grid: int, params, inits=INITS, load_writes: bool = False,
              bounded: bool = False) -> Verdict:
    """The union of the verdicts over the values of P in `params`."""
    v = Verdict()
    for p in params:
        judge(kernel, grid, p, inits, v, load_writes, bounded=bounded)
    v.benign -= set(v.racy)
    return v


def unchanged(kernel: Kernel) -> frozenset:
    """Counters drawn from that no atomic of the kernel changes (loads and adds of zero only)."""
    drawn = {d.counter for d in kernel.draws()}
    moved = {d.counter for d in kernel.draws() if d.op != "load" and d.step != 0}
    return frozenset(drawn - moved)


def instances(kernel: Kernel, grid: int) -> int:
    """Counter instances: one per global counter, one per block for a shared one."""
    return sum(1 if c.space == GLOBAL else grid for c in kernel.counters)


def wide_inits(kernel: Kernel, free: frozenset = frozenset(), blocks: tuple | None = None) -> tuple | None:
    """The widest set of initial values, around INITS, the oracle can afford on this kernel (each
    draw from a counter in `free` a value of its own; with `blocks`, those blocks alone): its
    states are about len ** (counter instances and free draws) times the interleavings of the
    threads' draws. None when even INITS is too many."""
    grid = kernel.grid if blocks is None else len(blocks)
    n = max(1, instances(kernel, grid) + kernel.block * grid * sum(d.counter in free for d in kernel.draws()))
    draws = len(kernel.draws())
    orders = math.factorial(draws * kernel.block * grid) // math.factorial(draws) ** (kernel.block * grid)
    if len(INITS) ** n * orders > WIDE_STATES:
        return None if free else INITS
    values = sorted(WIDE_INITS, key=abs)
    k = len(INITS)
    while k + 1 <= len(values) and len(set(INITS) | set(values[:k + 1])) ** n * orders <= WIDE_STATES:
        k += 1
    return tuple(sorted(set(INITS) | set(values[:k])))


def describe(kernel: Kernel, buf: str, coll: tuple) -> str:
    a, b, drawn = coll
    what = lambda x: (f"thread {x.thread % kernel.block} of block {x.block} "  # noqa: E731
                      f"{'writes' if x.write else 'reads'}"
                      + (f" {x.value}" if buf == "dst" and x.write else f" ({x.scope} scope)" if buf != "dst" else ""))
    return f"{buf}[{a.element}]: {what(a)}, {what(b)} (draws per thread {list(map(list, drawn))})"


# ---------------------------------------------------------------- kernelrace


class HardTimeout(Exception):
    pass


@contextlib.contextmanager
def hard_limit(seconds: float):
    """Interrupt the block after `seconds` of wall-clock time (on Unix, in the main thread)."""
    if not hasattr(signal, "setitimer") or threading.current_thread() is not threading.main_thread():
        yield
        return

    def alarm(signum, frame):
        raise HardTimeout(f"over {seconds:g} s")

    old = signal.signal(signal.SIGALRM, alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


_COMPILED: dict = {}   # GLSL source -> its disassembly, compiled once for both modes


def kernelrace(em: Emitted, kernel: Kernel, concrete: bool, workdir: Path, timeout: float):
    """(findings, None) or (None, why there are none: rejected, crashed, timeout)."""
    try:
        if em.dialect == "glsl":
            if em.text not in _COMPILED:
                path = workdir / "k.comp"
                path.write_text(em.text)
                if len(_COMPILED) > 64:
                    _COMPILED.clear()
                _COMPILED[em.text] = read_source(str(path), None)[:2]
            text, lang = _COMPILED[em.text]
            name = "k.comp.spvasm"
        else:
            text, lang, name = em.text, em.dialect, f"k{SUFFIX[em.dialect]}"
        block = (kernel.block, 1, 1) if concrete and lang not in ("spirv", "wgsl") else None
        grid = (kernel.grid, 1, 1) if concrete else None
        defines = {"P": kernel.p} if concrete and kernel.uses("P") else {}
        options = Options(hints="off", kernel_timeout_s=timeout, scope="all")
        with hard_limit(HARD_TIMEOUT_FACTOR * timeout):
            results = check_text(text, lang, name, block, grid, defines, options)
        return [f for r in results for f in r.findings], None
    except KernelraceError as exc:
        return None, ("rejected", str(exc).replace(f"{workdir}/", ""))
    except HardTimeout as exc:
        return None, ("timeout", str(exc))
    except Exception as exc:  # a crash of the code under test is a finding of this harness
        where = traceback.extract_tb(exc.__traceback__)[-1]
        return None, ("crashed", f"{type(exc).__name__} at {Path(where.filename).name}:{where.lineno}: {exc}")


def witness_blocks(f) -> tuple:
    """The blocks (along x) of a finding's two threads; () without a witness."""
    w = f.witness or {}
    if not w:
        return ()
    return tuple(sorted({(w.get(k) or w.get("block") or [0])[0] for k in ("first_block", "second_block")}))


def witness_threads(f, block: int) -> frozenset:
    w = f.witness or {}
    b1 = (w.get("first_block") or w.get("block") or [0])[0]
    b2 = (w.get("second_block") or w.get("block") or [0])[0]
    return frozenset((b1 * block + w["first_thread"][0], b2 * block + w["second_thread"][0]))


@dataclass(frozen=True)
class Failure:
    kind: str                  # missed | false alarm | witness | rejected | crashed | timeout
    dialect: str
    mode: str                  # concrete | symbolic
    buffer: str
    detail: str
    family: str = ""           # what explains it, where the harness can tell (see `family`)

    @property
    def signature(self) -> tuple:
        """What shrinking keeps and the report groups by."""
        what = "counter" if self.buffer.startswith("c") else self.buffer
        return self.kind, self.dialect, self.mode, what, self.family


@dataclass
class Run:
    """kernelrace against the oracle on one kernel in one dialect and mode."""
    status: str = "checked"    # checked | skipped | rejected | crashed | timeout
    racy: int = 0              # racy buffers (the oracle)
    found: int = 0
    unknown: int = 0           # racy buffers with only an `unknown` finding
    clean_buffers: int = 0     # buffers the oracle finds clean (concrete mode)
    wide: int = 0              # findings whose race needs a counter value outside INITS
    benign_reported: int = 0   # findings on a counter whose collisions are adds of zero only
    far: int = 0               # witnesses at an element past FAR, the two threads colliding elsewhere
    unknown_findings: int = 0
    outside: int = 0           # buffers whose every collision has a thread that leaves dst (bounded dialects)
    found_outside: int = 0     # of those, with an out-of-bounds (or unknown) finding
    failures: list = field(default_factory=list)
    seconds: float = 0.0


UNCHANGED = "loads of a counter no atomic changes"
BOTH_SCOPED = "two blocks' block-scoped updates"
SAME_VALUE = "every collision stores one value"
OUTSIDE = "a thread leaves dst"


def family(kernel: Kernel, buf: str, load_writes: bool, verdict: Verdict, bounded: bool = False) -> str:
    """UNCHANGED when the oracle finds the race once each draw from a counter the kernel never
    changes is any value, whatever the other threads draw (as kernelrace takes an atomic's result:
    the thread's own); SAME_VALUE when the oracle's collisions there all store one value; ""
    otherwise."""
    free = unchanged(kernel)
    inits = wide_inits(kernel, free) if free else None
    if inits and buf in judge(kernel, kernel.grid, kernel.p, inits, load_writes=load_writes, free=free,
                              bounded=bounded).racy:
        return UNCHANGED
    return SAME_VALUE if buf in verdict.benign else ""


def check(kernel: Kernel, dialect: str, mode: str, workdir: Path, timeout: float) -> Run:
    run = Run()
    try:
        em = emit(kernel, dialect)
    except Unexpressible:
        run.status = "skipped"
        return run
    t0 = time.perf_counter()
    concrete = mode == "concrete"
    findings, why = kernelrace(em, kernel, concrete, workdir, timeout)
    run.seconds = time.perf_counter() - t0
    if findings is None:
        run.status = why[0]
        run.failures.append(Failure(why[0], dialect, mode, "", why[1]))
        return run
    lw = dialect == "cuda"   # its atomic loads are adds of zero
    bd = dialect in BOUNDED
    if concrete:
        verdict = judge(kernel, kernel.grid, kernel.p, load_writes=lw, bounded=bd)
    else:
        # Dimensions the kernel never reads are analysed with extent 1 (a stated assumption, said
        # in the output): judged so, one block, one thread per block
        one = kernel if kernel.reads_tid() else replace(kernel, block=1)
        verdict = judge_all(one, kernel.grid if kernel.reads_bid() else 1, PARAMS, load_writes=lw, bounded=bd)
    rules: dict = {}
    for f in findings:
        rules.setdefault(f.second.buffer, set()).add(f.rule)
    run.unknown_findings = sum(f.rule == "unknown" for f in findings)
    summary = "; ".join(sorted(f"{f.rule} on {f.second.buffer}" for f in findings)) or "clean"
    for buf, coll in sorted(verdict.racy.items()):
        run.racy += 1
        got = rules.get(buf, set())
        if got & RACE_RULES:
            run.found += 1
        elif "unknown" in got:
            run.unknown += 1
        else:
            scoped = buf != "dst" and coll[0].scope == coll[1].scope == "block"
            run.failures.append(Failure("missed", dialect, mode, buf,
                                        f"oracle: {describe(kernel, buf, coll)}; kernelrace: {summary}",
                                        BOTH_SCOPED if scoped else ""))
    for buf, coll in sorted(verdict.outside.items()):
        if buf in verdict.racy:
            continue
        run.outside += 1
        got = rules.get(buf, set())
        if OUT_OF_BOUNDS in got or "unknown" in got:
            run.found_outside += 1
        elif not got & RACE_RULES:   # a race finding there is judged below
            run.failures.append(Failure("missed", dialect, mode, buf,
                                        f"oracle: {describe(kernel, buf, coll)} (a thread leaves dst); "
                                        f"kernelrace: {summary}", OUTSIDE))
    if not concrete:
        return run
    buffers = {"dst"} | {c.name for c in kernel.counters if c.space == GLOBAL}
    run.clean_buffers = len(buffers - set(verdict.racy))
    wides: dict = {}

    def wider(f) -> Verdict:
        """The oracle at the widest initial values it can afford: on the whole launch, and on the
        finding's two blocks alone, where fewer counters and threads afford wider values."""
        sub = witness_blocks(f)
        for key in {None, sub if sub and len(sub) < kernel.grid else None}:
            if key not in wides:
                wides[key] = judge(kernel, kernel.grid, kernel.p, wide_inits(kernel, blocks=key), load_writes=lw,
                                   bounded=bd,
                                   blocks=key)
        out = Verdict(dict(wides[None].racy), set(), set(wides[None].collisions), dict(wides[None].outside))
        for key in {sub} - {None}:
            if key in wides:
                out.racy = {**wides[key].racy, **out.racy}
                out.collisions |= wides[key].collisions
        return out

    for f in findings:
        buf = f.second.buffer
        if f.rule not in RACE_RULES:
            continue
        if buf not in verdict.racy:
            if buf in verdict.benign and buf != "dst":
                run.benign_reported += 1
                continue
            wide = wider(f)
            if buf in wide.racy:
                run.wide += 1
            elif buf in verdict.outside or buf in wide.outside:
                run.failures.append(Failure("false alarm", dialect, mode, buf,
                                            f"{f.rule} on {buf}: {f.message}: every collision the oracle finds "
                                            f"has a thread that leaves dst; kernelrace: {summary}", OUTSIDE))
                continue
            else:
                same = " (same-value writes only)" if buf in verdict.benign else ""
                run.failures.append(Failure("false alarm", dialect, mode, buf,
                                            f"{f.rule} on {buf}{same}: {f.message}; kernelrace: {summary}",
                                            family(kernel, buf, lw, verdict, bd)))
                continue
        if f.witness:
            elem, pair = f.witness.get("element", 0), witness_threads(f, kernel.block)
            if (buf, elem, pair) in verdict.collisions:
                continue
            wide = wider(f)
            if (buf, elem, pair) in wide.collisions:
                continue
            if abs(elem) > FAR and any((b, p) == (buf, pair) for b, _, p in wide.collisions):
                run.far += 1   # the two threads meet, at an element past the oracle's counter values
                continue
            free = unchanged(kernel)
            inits = wide_inits(kernel, free) if free else None
            fam = ""
            if inits and (buf, elem, pair) in judge(kernel, kernel.grid, kernel.p, inits,
                                                    load_writes=lw, free=free, bounded=bd).collisions:
                fam = UNCHANGED
            run.failures.append(Failure("witness", dialect, mode, buf,
                                        f"{f.rule} on {buf}: {f.message}: the oracle has no such collision", fam))
    return run


# ---------------------------------------------------------------- campaign


def kernel_at(seed: int, i: int) -> Kernel:
    return draw_kernel(random.Random(f"{seed}:{i}"))


@dataclass
class Record:
    index: int
    runs: dict                 # (dialect, mode) -> Run

    @property
    def failures(self) -> list[Failure]:
        return [f for r in self.runs.values() for f in r.failures]


def check_kernel(kernel: Kernel, dialects, timeout: float, modes=("concrete", "symbolic")) -> dict:
    with tempfile.TemporaryDirectory(prefix="atomic-campaign-") as tmp:
        return {(d, m): check(kernel, d, m, Path(tmp), timeout) for d in dialects for m in modes}


def _work(args) -> Record:
    seed, i, dialects, timeout, modes = args
    return Record(i, check_kernel(kernel_at(seed, i), dialects, timeout, modes))


# -------- shrinking


def smaller(kernel: Kernel):
    """Kernels one step simpler: a statement dropped, an If replaced by its body, a term, constant
    or halving dropped, a draw made plain (a step of 1, device scope), fewer threads or blocks."""
    def bodies(body):
        for i, s in enumerate(body):
            yield body[:i] + body[i + 1:]
            if isinstance(s, If):
                yield body[:i] + s.body + body[i + 1:]
                for b in bodies(s.body):
                    yield body[:i] + (replace(s, body=b),) + body[i + 1:]
                for side in ("left", "right"):
                    for lin in simpler_lins(getattr(s, side)):
                        yield body[:i] + (replace(s, **{side: lin}),) + body[i + 1:]
            elif isinstance(s, (Store, Read)):
                for name in ("index", "value") if isinstance(s, Store) else ("index",):
                    for lin in simpler_lins(getattr(s, name)):
                        yield body[:i] + (replace(s, **{name: lin}),) + body[i + 1:]
            elif isinstance(s, Draw):
                for d in (replace(s, block_scope=False), replace(s, op="add") if s.op == "sub" else s,
                          replace(s, step=1) if s.step not in (0, 1) else s, replace(s, spelling=0)):
                    if d != s:
                        yield body[:i] + (d,) + body[i + 1:]

    for b in bodies(kernel.body):
        yield replace(kernel, body=b)
    if kernel.grid > 1:
        yield replace(kernel, grid=kernel.grid - 1)
    if kernel.block > 1:
        yield replace(kernel, block=kernel.block - 1)
    if len(kernel.counters) > 1:
        used = {d.counter for d in kernel.draws()}
        left = tuple(c for c in kernel.counters if c.name in used)
        if left and len(left) < len(kernel.counters):
            yield replace(kernel, counters=left)
    if kernel.p != 0:
        yield replace(kernel, p=0)


def defined_ok(kernel: Kernel) -> bool:
    """Every draw a statement names is drawn before it, in scope; something is stored or read."""
    def go(body, vis):
        vis = set(vis)
        for s in body:
            if isinstance(s, Draw):
                vis.add(s.var)
            need = set()
            if isinstance(s, Store):
                need = {a for a, _ in s.index.terms + s.value.terms}
            elif isinstance(s, Read):
                need = {a for a, _ in s.index.terms}
            elif isinstance(s, If):
                need = {a for a, _ in s.left.terms + s.right.terms}
            if any(a.startswith("t") and a != "tid" and a not in vis for a in need):
                return False
            if isinstance(s, If) and not go(s.body, vis):
                return False
        return True
    return go(kernel.body, ()) and any(isinstance(s, (Store, Read)) for s in walk(kernel.body))


def simpler_lins(lin: Lin):
    if lin.halve:
        yield replace(lin, halve=False)
    if lin.const:
        yield replace(lin, const=0)
    for i in range(len(lin.terms)):
        if len(lin.terms) > 1 or lin.const:
            yield replace(lin, terms=lin.terms[:i] + lin.terms[i + 1:])
        a, c = lin.terms[i]
        if c != 1:
            yield replace(lin, terms=lin.terms[:i] + ((a, 1),) + lin.terms[i + 1:])


def still_fails(kernel: Kernel, failure: Failure, timeout: float) -> bool:
    with tempfile.TemporaryDirectory(prefix="atomic-shrink-") as tmp:
        run = check(kernel, failure.dialect, failure.mode, Path(tmp), timeout)
    return any(f.signature == failure.signature for f in run.failures)


def shrink(kernel: Kernel, failure: Failure, timeout: float, budget_s: float) -> Kernel:
    """Greedy: take the first simpler kernel that fails the same way, until none does."""
    deadline = time.monotonic() + budget_s
    progress = True
    while progress and time.monotonic() < deadline:
        progress = False
        for k in smaller(kernel):
            if not defined_ok(k):
                continue
            if time.monotonic() > deadline:
                break
            if still_fails(k, failure, timeout):
                kernel, progress = k, True
                break
    return kernel


def header(kernel: Kernel, failure: Failure, seed: int, index: int) -> tuple:
    args = []
    if failure.mode == "concrete":
        if failure.dialect not in ("wgsl", "glsl"):
            args += ["--block-dim", str(kernel.block)]
        args += ["--grid-dim", str(kernel.grid)]
        if kernel.uses("P"):
            args += ["--define", f"P={kernel.p}"]
    return (f"// kernelrace-args: {' '.join(args)}".rstrip(),
            f"// atomic campaign seed {seed} kernel {index}, shrunk: {failure.kind} ({failure.mode}) on "
            f"{failure.buffer}")


# -------- the campaign and its report


@dataclass
class Campaign:
    seed: int
    kernels: int
    dialects: tuple
    records: list = field(default_factory=list)
    seconds: float = 0.0

    def tally(self) -> dict:
        t: dict = {}
        for rec in self.records:
            for (d, m), r in rec.runs.items():
                x = t.setdefault((d, m), Tally())
                x["kernels"] += 1
                x[r.status] += 1
                for name in ("racy", "found", "unknown", "clean_buffers", "wide", "benign_reported", "far", "outside",
                             "found_outside"):
                    x[name] += getattr(r, name)
                x["unknown findings"] += r.unknown_findings
                x["unknown kernels"] += r.unknown_findings > 0
                for f in r.failures:
                    x[f.kind] += 1
                x["seconds"] += r.seconds
        return t

    def failures(self) -> list[tuple[int, Failure]]:
        return [(rec.index, f) for rec in self.records for f in rec.failures]


def run_campaign(kernels: int, seed: int, dialects=DIALECTS, jobs: int = 1, timeout: float = KERNEL_TIMEOUT_S,
                 start: int = 0, log=None, progress: int = 0, modes=("concrete", "symbolic")) -> Campaign:
    """Kernels start .. start + kernels - 1 of `seed`, each in every dialect and mode; `log` is
    called with each kernel's Record as it comes in, and every `progress` kernels a line goes to
    stderr."""
    camp = Campaign(seed, kernels, tuple(dialects))
    t0 = time.perf_counter()
    work = [(seed, i, tuple(dialects), timeout, modes) for i in range(start, start + kernels)]
    with contextlib.ExitStack() as stack:
        if jobs <= 1:
            results = map(_work, work)
        else:
            pool = stack.enter_context(multiprocessing.get_context("fork").Pool(jobs, maxtasksperchild=50))
            results = pool.imap(_work, work, chunksize=1)
        for n, rec in enumerate(results, 1):
            camp.records.append(rec)
            if log is not None:
                log(rec)
            if progress and n % progress == 0:
                print(f"{n}/{kernels} kernels, {time.perf_counter() - t0:.0f} s, failures at "
                      f"{sorted({r.index for r in camp.records if r.failures})}", file=sys.stderr, flush=True)
    camp.seconds = time.perf_counter() - t0
    return camp


def log_line(rec: Record) -> str:
    """One kernel's outcome per dialect and mode: its status and failures, as one line."""
    parts = [f"{d}/{m}:{r.status}" + "".join(f",{f.kind}@{f.buffer}" + ("[" + f.family + "]") * bool(f.family)
                                             for f in r.failures)
             for (d, m), r in sorted(rec.runs.items())]
    return f"{rec.index} " + " ".join(parts)


def summary(camp: Campaign) -> list[str]:
    t = camp.tally()
    out = [f"seed {camp.seed}: {camp.kernels} kernels, {camp.seconds:.0f} s"]
    out.append(f"{'dialect':8} {'mode':9} {'drawn':>5} {'skip':>4} {'chkd':>4} {'racy':>4} {'found':>5} "
               f"{'unkn':>4} {'miss':>4} {'oob':>3} {'found':>5} {'clean':>5} {'f.a.':>4} {'wide':>4} {'wit':>3} {'far':>3} {'benign':>6} "
               f"{'rej':>3} {'crash':>5} {'t/o':>3} {'unk.k':>5} {'cpu s':>6}")
    for d in camp.dialects:
        for m in ("concrete", "symbolic"):
            if (d, m) not in t:
                continue
            x = t[(d, m)]
            out.append(f"{d:8} {m:9} {x['kernels']:5} {x['skipped']:4} {x['checked']:4} {x['racy']:4} "
                       f"{x['found']:5} {x['unknown']:4} {x['missed']:4} {x['outside']:3} {x['found_outside']:5} "
                       f"{x['clean_buffers'] if m == 'concrete' else '-':>5} "
                       f"{x['false alarm'] if m == 'concrete' else '-':>4} {x['wide']:4} {x['witness']:3} {x['far']:3} "
                       f"{x['benign_reported']:6} {x['rejected']:3} {x['crashed']:5} {x['timeout']:3} "
                       f"{x['unknown kernels']:5} {x['seconds']:6.0f}")
    families = Tally((f.kind, f.family or "other", f.dialect, f.mode) for _, f in camp.failures())
    out += [f"  {n:4} {kind} ({fam}) {d} {m}" for (kind, fam, d, m), n in sorted(families.items())]
    return out


def report_failures(camp: Campaign, timeout: float, shrink_s: float, save: Path | None) -> list[str]:
    """Each distinct failure, shrunk from its first kernel, with the emitted source."""
    out, seen = [], {}
    for i, f in camp.failures():
        seen.setdefault(f.signature, []).append((i, f))
    for sig, items in sorted(seen.items()):
        i, f = items[0]
        kernel = kernel_at(camp.seed, i)
        if f.kind in ("missed", "false alarm", "witness"):
            kernel = shrink(kernel, f, timeout, shrink_s)
        with tempfile.TemporaryDirectory() as tmp:
            again = [g for g in check(kernel, f.dialect, f.mode, Path(tmp), timeout).failures
                     if g.signature == f.signature]
        detail = (again or [f])[0].detail
        src = emit(kernel, f.dialect, header(kernel, f, camp.seed, i)).text
        fam = f" [{f.family}]" if f.family else ""
        out += [f"--- {f.kind}{fam} ({f.dialect}, {f.mode}) on {f.buffer}: {len(items)} kernel(s), "
                f"first kernel {i}: {[j for j, _ in items[:12]]}", detail, src]
        if save is not None:
            save.mkdir(parents=True, exist_ok=True)
            name = f"{f.kind.replace(' ', '_')}_{f.dialect}_{f.mode}_{f.buffer}_{camp.seed}_{i}{SUFFIX[f.dialect]}"
            (save / name).write_text(src)
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--kernels", type=int, default=100)
    ap.add_argument("--seed", type=int, default=43)
    ap.add_argument("--start", type=int, default=0, help="index of the first kernel")
    ap.add_argument("--dialects", default=",".join(DIALECTS))
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--kernel-timeout", type=float, default=KERNEL_TIMEOUT_S)
    ap.add_argument("--shrink-seconds", type=float, default=60.0)
    ap.add_argument("--save-failures", type=Path)
    ap.add_argument("--modes", default="concrete,symbolic")
    ap.add_argument("--log", type=Path, help="write one line per kernel: its status and failures per dialect")
    ap.add_argument("--progress", type=int, default=25, help="a line on stderr every N kernels (0: none)")
    args = ap.parse_args(argv)
    dialects = tuple(args.dialects.split(","))
    with contextlib.ExitStack() as stack:
        out = stack.enter_context(args.log.open("w")) if args.log else None
        log = (lambda rec: print(log_line(rec), file=out, flush=True)) if out else None
        camp = run_campaign(args.kernels, args.seed, dialects, args.jobs, args.kernel_timeout, args.start,
                            log, args.progress, tuple(args.modes.split(",")))
    print("\n".join(summary(camp)), flush=True)
    if camp.failures():
        print("\n".join(report_failures(camp, args.kernel_timeout, args.shrink_seconds, args.save_failures)))
    bad = [f for _, f in camp.failures() if f.kind in ("missed", "false alarm", "witness")]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
