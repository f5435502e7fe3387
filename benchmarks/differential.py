"""Differential testing of kernelrace against a brute-force oracle on small random kernels.

A kernel is a small abstract program (the dataclasses below), drawn by hypothesis strategies so a
failing kernel shrinks to a minimal one. It is emitted as CUDA, Metal and a GLSL compute shader,
and evaluated directly by the oracle: every thread of one block is run on concrete parameter
values with C's 32-bit integer semantics, every memory access is recorded, and a race is decided
exactly (two threads, one element, at least one write, no barrier ordering that memory space
between them). kernelrace (in-process) checks each emitted kernel twice, with the oracle's
parameter values given by `--scalar` and with the parameters symbolic. A buffer the oracle finds
racy without a finding on it is a missed race; every finding's witness is replayed in the oracle.

    python benchmarks/differential.py --kernels N --seed S [--dialects cuda,metal,glsl] [--jobs J]
                                      [--save-failures DIR] [--shrink-seconds T] [--kernel-timeout T]
                                      [--chunk N] [--rotate-dialects] [--shrink-per-signature K]

The campaign is deterministic in its seed and chunk size (not in --jobs): kernels are drawn in
chunks, each by one hypothesis run seeded from (seed, chunk). A failure is shrunk by drawing its
chunk again up to the failing kernel and letting hypothesis shrink it against the same failure
(kind, and memory space and access kinds of a missed race or why a witness does not replay).
Nothing is kept in a hypothesis database: the seed reproduces a campaign, and --save-failures
writes each failing kernel as a fixture. tests/test_differential.py runs a pinned slice.
"""

from __future__ import annotations

import argparse
import bisect
import contextlib
import dataclasses
import multiprocessing
import re
import resource
import signal
import struct
import sys
import tempfile
import threading
import time
import traceback
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Union

from hypothesis import HealthCheck, Phase, Verbosity, given, reject, settings
from hypothesis import seed as hypothesis_seed
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from analyzer.errors import KernelraceError  # noqa: E402
from analyzer.pipeline import Options, check_text, read_source  # noqa: E402

DIALECTS = ("cuda", "metal", "glsl")
SUFFIX = {"cuda": ".cu", "metal": ".metal", "glsl": ".comp"}
MODES = ("define", "symbolic")
SHARED, GLOBAL = "shared", "global"
RACE_RULES = frozenset({"write-after-write", "read-after-write", "write-after-read", "barrier-scope"})

CHUNK = 50                     # kernels per hypothesis run: the unit of work and of determinism
# The oracle's parameter values: half of them 0 or 1, where products and strides degenerate.
PARAM_VALUES = st.integers(0, 1) | st.integers(2, 5)
MAX_TRIPS = 64                 # iterations of one loop entry the oracle runs before giving up
MAX_STEPS = 4096               # statements one thread may execute in the oracle
REPLAY_STEPS = 20_000          # the same, replaying a witness (one thread, any parameter values)
KERNEL_TIMEOUT_S = 10.0        # kernelrace's own per-kernel limit (pairs left are `unknown`)
HARD_TIMEOUT_FACTOR = 3        # a kernelrace call is cut off at this many kernel timeouts
WORKER_MEMORY = 6 << 30        # address-space limit of a campaign worker
INT_MIN, INT_MAX = -(1 << 31), (1 << 31) - 1

# ---------------------------------------------------------------- abstract programs


@dataclass(frozen=True)
class Const:
    value: int


@dataclass(frozen=True)
class Tid:
    dim: int                   # 0, 1, 2: the thread's index in the block along x, y, z


@dataclass(frozen=True)
class Param:
    name: str


@dataclass(frozen=True)
class Var:
    name: str                  # a loop counter or an int local


@dataclass(frozen=True)
class Bin:
    op: str                    # + - * ^ & | << >> / % between two expressions (/ % by a power of two)
    left: "Expr"
    right: "Expr"


@dataclass(frozen=True)
class ByConst:
    op: str                    # / % << >> & by a constant (positive for / and %)
    left: "Expr"
    const: int


Expr = Union[Const, Tid, Param, Var, Bin, ByConst]


@dataclass(frozen=True)
class Cmp:
    op: str                    # < <= == != >= >
    left: Expr
    right: Expr


@dataclass(frozen=True)
class IntValue:
    expr: Expr                 # (float)(expr)


@dataclass(frozen=True)
class FConst:
    value: float


@dataclass(frozen=True)
class Load:
    buffer: str
    index: Expr


@dataclass(frozen=True)
class FLocal:
    name: str


@dataclass(frozen=True)
class FBin:
    op: str                    # + or *
    left: "Value"
    right: "Value"


Value = Union[IntValue, FConst, Load, FLocal, FBin]


@dataclass(frozen=True)
class Store:
    buffer: str
    index: Expr
    value: Value


@dataclass(frozen=True)
class LoadLocal:
    name: str                  # float name = buffer[index];
    buffer: str
    index: Expr


@dataclass(frozen=True)
class IntLocal:
    name: str                  # int name = expr;
    expr: Expr


@dataclass(frozen=True)
class For:
    var: str                   # for (int var = start; var < bound; var += step)
    start: Expr
    bound: Expr
    step: Expr
    body: tuple


@dataclass(frozen=True)
class While:
    var: str                   # int var = start; while (var < bound) { body; var += step; }
    start: Expr
    bound: Expr
    step: Expr
    body: tuple


@dataclass(frozen=True)
class If:
    cond: Cmp
    then: tuple
    orelse: tuple


@dataclass(frozen=True)
class Barrier:
    spaces: frozenset          # the memory spaces it orders (each dialect narrows or widens it)


Stmt = Union[Store, LoadLocal, IntLocal, For, While, If, Barrier]


@dataclass(frozen=True)
class Kernel:
    block: tuple               # (x, y, z)
    params: tuple              # int parameter names
    globals: tuple             # float pointer / device / storage buffer names
    shared: tuple              # (name, size) of shared arrays; sizes are powers of two
    body: tuple


@dataclass(frozen=True)
class Case:
    kernel: Kernel
    values: tuple              # ((param, value), ...): the oracle's parameter values

    @property
    def params(self) -> dict[str, int]:
        return dict(self.values)


def space_of(buffer: str) -> str:
    """Shared arrays are named s0, s1, ...; every other buffer is global."""
    return SHARED if re.fullmatch(r"s\d+", buffer) else GLOBAL


# ---------------------------------------------------------------- the generator

ALL = frozenset({SHARED, GLOBAL})
BARRIER_SPACES = (ALL, frozenset({SHARED}), frozenset({GLOBAL}), frozenset())
CMP_OPS = ("<", "==", "!=", "<=", ">", ">=")
MAX_DEPTH = 2                  # nesting of loops and branches


@dataclass(frozen=True)
class Scope:
    """What a statement being drawn may use, and whether every thread executes it alike."""
    block: tuple
    params: tuple
    globals: tuple
    shared: tuple
    ints: tuple = ()           # ((name, uniform), ...): int variables in scope
    floats: tuple = ()         # float locals in scope
    uniform: bool = True       # no enclosing condition or loop depends on the thread
    depth: int = 0

    def with_int(self, name: str, uniform: bool) -> "Scope":
        return dataclasses.replace(self, ints=self.ints + ((name, uniform),))

    def with_float(self, name: str) -> "Scope":
        return dataclasses.replace(self, floats=self.floats + (name,))

    def nested(self, uniform: bool) -> "Scope":
        return dataclasses.replace(self, uniform=self.uniform and uniform, depth=self.depth + 1)


class Names:
    """Fresh variable names, numbered in drawing order (so a shrunk kernel renames consistently)."""

    def __init__(self):
        self.counts: Counter = Counter()

    def fresh(self, prefix: str) -> str:
        self.counts[prefix] += 1
        return f"{prefix}{self.counts[prefix] - 1}"


def is_uniform(e: Expr, scope: Scope) -> bool:
    if isinstance(e, Tid):
        return False
    if isinstance(e, Var):
        return dict(scope.ints)[e.name]
    if isinstance(e, Bin):
        return is_uniform(e.left, scope) and is_uniform(e.right, scope)
    if isinstance(e, ByConst):
        return is_uniform(e.left, scope)
    return True


# Each expression, value and statement is its own strategy, so that hypothesis sees it as one
# span: the shrinker deletes a statement or replaces an expression by a simpler one of the same
# kind. Alternatives are listed simplest first (hypothesis shrinks toward the first).


@st.composite
def exprs(draw, scope: Scope, depth: int = 2, uniform: bool = False) -> Expr:
    """An int expression; `uniform` keeps thread ids (and variables derived from them) out."""
    ints = [n for n, u in scope.ints if u or not uniform]
    kinds = ["const"] + ([] if uniform else ["tid"]) + (["param"] if scope.params else []) \
        + (["var"] if ints else []) + (["bin", "byconst", "bits"] if depth > 0 else [])
    kind = draw(st.sampled_from(kinds))
    if kind == "const":
        return Const(draw(st.integers(0, 8)))
    if kind == "tid":
        return Tid(draw(st.integers(0, 2)))
    if kind == "param":
        return Param(draw(st.sampled_from(scope.params)))
    if kind == "var":
        return Var(draw(st.sampled_from(ints)))
    left = draw(exprs(scope, depth - 1, uniform))
    if kind == "bin":
        return Bin(draw(st.sampled_from("+*-")), left, draw(exprs(scope, depth - 1, uniform)))
    if kind == "bits":
        # Shifts by a computed amount, and ^ & | with another expression or with a power of two
        # whose exponent follows a counter (a bitonic sort's `i ^ stride`, a butterfly's `i & half`).
        # And the mask of a run-time width (`i & ((1 << k) - 1)`) and quotients and remainders by
        # such a power (`tid % (2 * s)`).
        op = draw(st.sampled_from(["^", "&", "|", "<<", ">>", "mask", "/", "%"]))
        if op in ("<<", ">>"):
            return Bin(op, left, draw(amounts(scope, uniform)))
        if op == "mask":
            return Bin("&", left, Bin("-", draw(powers(scope, uniform)), Const(1)))
        if op in ("/", "%"):
            return Bin(op, left, draw(powers(scope, uniform)))
        return Bin(op, left, draw(powers(scope, uniform) | exprs(scope, depth - 1, uniform)))
    op = draw(st.sampled_from(["/", "%", "&", ">>", "<<"]))
    const = {"/": st.integers(1, 8), "%": st.integers(1, 8), "&": st.integers(0, 31),
             ">>": st.integers(0, 3), "<<": st.integers(0, 3)}[op]
    return ByConst(op, left, draw(const))


def amounts(scope: Scope, uniform: bool):
    """A shift amount: a small constant, a loop counter or local, or a parameter."""
    names = [n for n, u in scope.ints if u or not uniform]
    out = st.integers(0, 4).map(Const)
    if names:
        out = out | st.sampled_from(names).map(Var)
    if scope.params:
        out = out | st.sampled_from(scope.params).map(Param)
    return out


@st.composite
def powers(draw, scope: Scope, uniform: bool) -> Expr:
    """`c << a`, c a power of two, perhaps shifted right again: a power of two (or 0) whose
    exponent follows the amounts."""
    e: Expr = Bin("<<", Const(draw(st.sampled_from([1, 2, 4]))), draw(amounts(scope, uniform)))
    if draw(st.booleans()):
        e = Bin(">>", e, draw(amounts(scope, uniform)))
    return e


@st.composite
def affine(draw, scope: Scope) -> Expr:
    """atom * coefficient + rest: the shape of most GPU addresses (`r * D + threadIdx.x`,
    `threadIdx.x * P`, `threadIdx.x + j * step`): the atom a loop counter or local when there is
    one, else a thread index or a parameter; the coefficient a constant or a parameter."""
    atoms = st.integers(0, 2).map(Tid)
    if scope.params:
        atoms = atoms | st.sampled_from(scope.params).map(Param)
    if scope.ints:
        atoms = st.sampled_from([n for n, _ in scope.ints]).map(Var) | atoms
    coefficient = st.integers(1, 4).map(Const)
    if scope.params:
        coefficient = st.sampled_from(scope.params).map(Param) | coefficient
    return Bin("+", Bin("*", draw(atoms), draw(coefficient)), draw(exprs(scope, depth=0)))


@st.composite
def indices(draw, scope: Scope, buffer: str) -> Expr:
    """A global index is any expression (the oracle drops kernels indexing below 0); a shared
    index is brought into the array by a mask, or by `%` (the oracle drops negative dividends)."""
    e = draw(affine(scope) | exprs(scope, depth=2))
    if space_of(buffer) == GLOBAL:
        return e
    size = dict(scope.shared)[buffer]
    return ByConst("%", e, size) if draw(st.booleans()) else ByConst("&", e, size - 1)


def buffers(scope: Scope):
    return st.sampled_from(scope.globals + tuple(n for n, _ in scope.shared))


def linear_tid(block: tuple) -> Expr:
    """x + y * X + z * X * Y: a different number for every thread of the block."""
    e: Expr = Tid(0)
    for d, stride in ((1, block[0]), (2, block[0] * block[1])):
        if block[d] > 1:
            e = Bin("+", e, Bin("*", Tid(d), Const(stride)))
    return e


@st.composite
def values(draw, scope: Scope, depth: int = 1) -> Value:
    """A stored value: mostly one that differs between threads, sometimes a constant (benign
    same-value writes), another int expression, a load (read-modify-write), a float local, or a
    sum or product of those."""
    kinds = ["tid", "tid", "int", "const", "load"] + (["local"] if scope.floats else []) \
        + (["bin"] if depth > 0 else [])
    kind = draw(st.sampled_from(kinds))
    if kind == "tid":
        return IntValue(linear_tid(scope.block))
    if kind == "int":
        return IntValue(draw(exprs(scope)))
    if kind == "const":
        return FConst(draw(st.sampled_from([1.0, 0.0, 2.0])))
    if kind == "load":
        buffer = draw(buffers(scope))
        return Load(buffer, draw(indices(scope, buffer)))
    if kind == "local":
        return FLocal(draw(st.sampled_from(scope.floats)))
    op = draw(st.sampled_from("+*"))
    left = draw(values(scope, 0))
    right = draw(st.sampled_from([1.0, 2.0]).map(FConst) | values(scope, 0))
    return FBin(op, left, right)


@st.composite
def loop_bounds(draw, scope: Scope) -> tuple[Expr, Expr, Expr]:
    """(start, bound, step): a counted loop from a small constant or a uniform expression to a
    constant or parametric bound, or a thread-strided loop from a thread-dependent start."""
    start_kind = draw(st.sampled_from(["const", "uniform", "thread"]))
    if start_kind == "const":
        start = Const(draw(st.integers(0, 3)))
    else:
        start = draw(exprs(scope, depth=1, uniform=start_kind == "uniform"))
    bound_kind = draw(st.sampled_from(["const", "param", "param+const", "large"]
                                      if scope.params else ["const", "large"]))
    if bound_kind == "const":
        bound = Const(draw(st.integers(1, 8)))
    elif bound_kind == "large":
        bound = Const(draw(st.sampled_from([16, 32, 64])))
    elif bound_kind == "param":
        bound = Param(draw(st.sampled_from(scope.params)))
    else:
        bound = Bin("+", Param(draw(st.sampled_from(scope.params))), Const(draw(st.integers(1, 4))))
    step_kind = draw(st.sampled_from(["const", "param", "param+1"] if scope.params else ["const"]))
    if step_kind == "const":
        step = Const(draw(st.integers(1, 4)))
    elif step_kind == "param":
        step = Param(draw(st.sampled_from(scope.params)))   # 0 never ends: the oracle drops it
    else:
        step = Bin("+", Param(draw(st.sampled_from(scope.params))), Const(1))
    return start, bound, step


@st.composite
def statements(draw, scope: Scope, names: Names) -> tuple[Stmt, Scope]:
    """One statement and the scope after it (a local it declares stays visible)."""
    kinds = ["store", "load", "int"]
    if scope.depth < MAX_DEPTH:
        kinds += ["for", "while", "if"]
    if scope.uniform:
        kinds.append("barrier")    # barriers only where every thread reaches them alike
    kind = draw(st.sampled_from(kinds))
    if kind == "store":
        buffer = draw(buffers(scope))
        return Store(buffer, draw(indices(scope, buffer)), draw(values(scope))), scope
    if kind == "load":
        buffer, name = draw(buffers(scope)), names.fresh("f")
        return LoadLocal(name, buffer, draw(indices(scope, buffer))), scope.with_float(name)
    if kind == "int":
        name, e = names.fresh("i"), draw(exprs(scope))
        return IntLocal(name, e), scope.with_int(name, is_uniform(e, scope))
    if kind == "barrier":
        return Barrier(draw(st.sampled_from(BARRIER_SPACES))), scope
    if kind == "if":
        cond = Cmp(draw(st.sampled_from(CMP_OPS)), draw(exprs(scope, depth=1)), draw(exprs(scope, depth=0)))
        inner = scope.nested(is_uniform(cond.left, scope) and is_uniform(cond.right, scope))
        return If(cond, draw_block(draw, inner, names, 1, 3), draw_block(draw, inner, names, 0, 2)), scope
    var = names.fresh("r" if kind == "for" else "w")
    start, bound, step = draw(loop_bounds(scope))
    uniform = all(is_uniform(e, scope) for e in (start, bound, step))
    body = draw_block(draw, scope.nested(uniform).with_int(var, uniform), names, 1, 3)
    return (For if kind == "for" else While)(var, start, bound, step, body), scope


def draw_block(draw, scope: Scope, names: Names, low: int, high: int) -> tuple:
    """`low` to `high` statements; each one past `low` is announced by a boolean, as hypothesis's
    own lists do, so that the shrinker can delete any statement."""
    out = []
    while len(out) < high and (len(out) < low or draw(st.booleans())):
        s, scope = draw(statements(scope, names))
        out.append(s)
    return tuple(out)


@st.composite
def block_dims(draw) -> tuple[int, int, int]:
    """1-3 dimensional blocks of 2 to 64 threads."""
    ndims = draw(st.integers(1, 3))
    x = draw(st.integers(2, 64))
    y = draw(st.integers(1, 64 // x)) if ndims > 1 else 1
    z = draw(st.integers(1, 64 // (x * y))) if ndims > 2 else 1
    return x, y, z


@st.composite
def cases(draw) -> Case:
    """A kernel and the parameter values the oracle runs it with."""
    block = draw(block_dims())
    params = tuple(f"P{i}" for i in range(draw(st.integers(0, 3))))
    # Several buffers keep races apart: a buffer with one race found hides any other on it.
    globals_ = tuple(f"g{i}" for i in range(draw(st.integers(1, 3))))
    shared = tuple((f"s{i}", draw(st.sampled_from([16, 8, 32, 64]))) for i in range(draw(st.integers(0, 2))))
    body = draw_block(draw, Scope(block, params, globals_, shared), Names(), 1, 5)
    values = tuple((p, draw(PARAM_VALUES)) for p in params)
    return Case(Kernel(block, params, globals_, shared, body), values)


# ---------------------------------------------------------------- emitting CUDA, Metal and GLSL


def nodes(tree):
    """Every node of a program fragment (statements, expressions, values), depth first."""
    if isinstance(tree, tuple):
        for x in tree:
            yield from nodes(x)
    elif dataclasses.is_dataclass(tree):
        yield tree
        for f in dataclasses.fields(tree):
            yield from nodes(getattr(tree, f.name))


def used_params(kernel: Kernel) -> tuple:
    """The parameters the body mentions: only those are declared (glslang drops an unused push
    constant block, and `--scalar` of a parameter kernelrace does not see is an error)."""
    seen = {n.name for n in nodes(kernel.body) if isinstance(n, Param)}
    return tuple(p for p in kernel.params if p in seen)


def barrier_spaces(dialect: str, spaces: frozenset) -> frozenset:
    """The spaces the barrier emitted for `spaces` orders: CUDA's `__syncthreads()` orders both,
    Metal says exactly which, GLSL's `barrier()` always orders shared memory and orders buffers
    only after `memoryBarrierBuffer()`."""
    if dialect == "cuda":
        return ALL
    if dialect == "glsl":
        return ALL if GLOBAL in spaces else frozenset({SHARED})
    return spaces


class Syntax:
    """How one dialect spells the pieces of a kernel."""

    def __init__(self, dialect: str):
        self.dialect = dialect

    def tid(self, d: int) -> str:
        return {"cuda": f"((int)threadIdx.{'xyz'[d]})", "metal": f"((int)tid.{'xyz'[d]})",
                "glsl": f"int(gl_LocalInvocationID.{'xyz'[d]})"}[self.dialect]

    def to_float(self, text: str) -> str:
        return f"float({text})" if self.dialect == "glsl" else f"(float)({text})"

    def float_const(self, v: float) -> str:
        return f"{v:.1f}" + ("" if self.dialect == "glsl" else "f")

    def barrier(self, spaces: frozenset) -> str:
        if self.dialect == "cuda":
            return "__syncthreads();"
        if self.dialect == "glsl":
            return "memoryBarrierBuffer(); barrier();" if GLOBAL in spaces else "barrier();"
        flags = [f for s, f in ((GLOBAL, "mem_flags::mem_device"), (SHARED, "mem_flags::mem_threadgroup"))
                 if s in spaces]
        return f"threadgroup_barrier({' | '.join(flags) or 'mem_flags::mem_none'});"

    def prologue(self, kernel: Kernel) -> list[str]:
        """Lines from the top of the file to the kernel's first statement."""
        params = used_params(kernel)
        shared = [f"{n}[{size}];" for n, size in kernel.shared]
        if self.dialect == "cuda":
            args = [f"float* {g}" for g in kernel.globals] + [f"int {p}" for p in params]
            return ([f'extern "C" __global__ void k({", ".join(args)}) {{']
                    + [f"    __shared__ float {s}" for s in shared])
        if self.dialect == "metal":
            args = [f"device float* {g} [[buffer({i})]]" for i, g in enumerate(kernel.globals)]
            args += [f"constant int& {p} [[buffer({len(kernel.globals) + i})]]" for i, p in enumerate(params)]
            args.append("uint3 tid [[thread_position_in_threadgroup]]")
            return (["#include <metal_stdlib>", "using namespace metal;", f"kernel void k({', '.join(args)}) {{"]
                    + [f"    threadgroup float {s}" for s in shared])
        x, y, z = kernel.block
        lines = ["#version 450", f"layout(local_size_x = {x}, local_size_y = {y}, local_size_z = {z}) in;"]
        lines += [f"layout(std430, set = 0, binding = {i}) buffer B{g} {{ float {g}[]; }};"
                  for i, g in enumerate(kernel.globals)]
        if params:
            lines.append(f"layout(push_constant) uniform Params {{ {' '.join(f'int {p};' for p in params)} }};")
        return lines + [f"shared float {s}" for s in shared] + ["void main() {"]


@dataclass
class Emitted:
    """A kernel's source in one dialect, with where each statement and loop landed."""
    dialect: str
    text: str
    lines: dict                # source line -> path of the statement on it
    loops: dict                # source line of a loop's header -> the loop's path


class Emitter:
    def __init__(self, dialect: str, header: list[str]):
        self.syntax = Syntax(dialect)
        self.out = list(header)
        self.lines: dict[int, tuple] = {}
        self.loops: dict[int, tuple] = {}

    def line(self, text: str, depth: int, path: tuple | None = None, loop: bool = False) -> None:
        self.out.append("    " * depth + text)
        if path is not None:
            (self.loops if loop else self.lines)[len(self.out)] = path

    def expr(self, e: Expr) -> str:
        if isinstance(e, Const):
            return str(e.value)
        if isinstance(e, Tid):
            return self.syntax.tid(e.dim)
        if isinstance(e, (Param, Var)):
            return e.name
        if isinstance(e, Bin):
            return f"({self.expr(e.left)} {e.op} {self.expr(e.right)})"
        return f"({self.expr(e.left)} {e.op} {e.const})"

    def value(self, v: Value) -> str:
        if isinstance(v, IntValue):
            return self.syntax.to_float(self.expr(v.expr))
        if isinstance(v, FConst):
            return self.syntax.float_const(v.value)
        if isinstance(v, Load):
            return f"{v.buffer}[{self.expr(v.index)}]"
        if isinstance(v, FLocal):
            return v.name
        return f"({self.value(v.left)} {v.op} {self.value(v.right)})"

    def block(self, stmts: tuple, path: tuple, depth: int) -> None:
        for i, s in enumerate(stmts):
            self.stmt(s, path + (i,), depth)

    def stmt(self, s: Stmt, path: tuple, depth: int) -> None:
        if isinstance(s, Store):
            self.line(f"{s.buffer}[{self.expr(s.index)}] = {self.value(s.value)};", depth, path)
        elif isinstance(s, LoadLocal):
            self.line(f"float {s.name} = {s.buffer}[{self.expr(s.index)}];", depth, path)
        elif isinstance(s, IntLocal):
            self.line(f"int {s.name} = {self.expr(s.expr)};", depth, path)
        elif isinstance(s, Barrier):
            self.line(self.syntax.barrier(s.spaces), depth, path)
        elif isinstance(s, If):
            self.line(f"if ({self.expr(s.cond.left)} {s.cond.op} {self.expr(s.cond.right)}) {{", depth)
            self.block(s.then, path + (0,), depth + 1)
            if s.orelse:
                self.line("} else {", depth)
                self.block(s.orelse, path + (1,), depth + 1)
            self.line("}", depth)
        elif isinstance(s, For):
            v, start, bound, step = s.var, self.expr(s.start), self.expr(s.bound), self.expr(s.step)
            self.line(f"for (int {v} = {start}; {v} < {bound}; {v} += {step}) {{", depth, path, loop=True)
            self.block(s.body, path + (0,), depth + 1)
            self.line("}", depth)
        else:
            self.line(f"int {s.var} = {self.expr(s.start)};", depth)
            self.line(f"while ({s.var} < {self.expr(s.bound)}) {{", depth, path, loop=True)
            self.block(s.body, path + (0,), depth + 1)
            self.line(f"{s.var} += {self.expr(s.step)};", depth + 1)
            self.line("}", depth)


def emit(kernel: Kernel, dialect: str, header: list[str]) -> Emitted:
    """The kernel's source, after `header` (comment lines)."""
    em = Emitter(dialect, header)
    em.out += em.syntax.prologue(kernel)
    em.block(kernel.body, (), 1)
    em.out.append("}")
    return Emitted(dialect, "\n".join(em.out) + "\n", em.lines, em.loops)


# ---------------------------------------------------------------- the oracle


class Reached(Exception):
    """A replayed thread performed the access it was followed for."""


class IllDefined(Exception):
    """The kernel has no defined behaviour for these values (a negative global index, an operand C
    or GLSL leaves undefined, 32-bit overflow), or runs longer than the oracle's limits."""


@dataclass(frozen=True)
class Access:
    thread: tuple              # (x, y, z)
    path: tuple                # the statement
    write: bool
    buffer: str
    element: int
    value: object              # the stored value (a float, or a term over loaded values); None for reads
    phase: int                 # barriers before it that order its buffer's memory space
    epoch: int                 # barriers before it, whatever they order
    iters: tuple               # ((loop path, iteration), ...) of the loops around it, outermost first
    seq: int                   # its position among its thread's accesses


def f32(x: float) -> float:
    return struct.unpack("f", struct.pack("f", x))[0]


def c_int(v: int) -> int:
    if not INT_MIN <= v <= INT_MAX:
        raise IllDefined(f"32-bit overflow ({v})")
    return v


def c_op(op: str, a: int, b: int) -> int:
    """C's 32-bit `a op b` (Bin's and ByConst's operators); IllDefined where C or GLSL leaves it
    undefined: a shift by an amount outside [0, 32) or of a negative value to the left, and / and %
    by 0 or of a negative value (GLSL's % of a negative operand is OpSMod, not C's remainder, and /
    is kept to the same operands)."""
    if op in ("<<", ">>"):
        if not 0 <= b < 32 or (op == "<<" and a < 0):
            raise IllDefined(f"{op} by {b} of {a}")
        return c_int(a << b) if op == "<<" else a >> b
    if op in ("/", "%"):
        if b == 0 or a < 0:
            raise IllDefined(f"{op} of {a} by {b}")
        return c_div(a, b) if op == "/" else a - b * c_div(a, b)
    if op in ("^", "&", "|"):
        return a ^ b if op == "^" else a & b if op == "&" else a | b
    return c_int(a + b if op == "+" else a - b if op == "-" else a * b)


def c_div(a: int, b: int) -> int:
    """C's division truncates toward zero."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


class ThreadRun:
    """One thread executing the kernel on concrete values, appending its accesses to `out`."""

    def __init__(self, kernel: Kernel, params: dict, thread: tuple, dialect: str, out: list,
                 replaying: bool = False, until: Callable[[Access], bool] | None = None):
        self.kernel, self.thread, self.dialect, self.out = kernel, thread, dialect, out
        # A replay follows one thread as far as it goes, out of bounds included: what matters is
        # whether it performs the witness's access (`until` stops it there).
        self.replaying, self.until = replaying, until
        self.endless: tuple | None = None      # the loop a replaying thread is proven stuck in
        self.max_trips, self.max_steps = (REPLAY_STEPS, REPLAY_STEPS) if replaying else (MAX_TRIPS, MAX_STEPS)
        self.ints = {p: params.get(p, 0) for p in kernel.params}
        self.floats: dict[str, object] = {}
        self.phases = {SHARED: 0, GLOBAL: 0}
        self.epoch = 0
        self.iters: tuple = ()
        self.steps = 0
        self.seq = 0
        self.own_writes: dict = {}   # (buffer, element, phase) -> this thread's writes to it so far
        self.sizes = dict(kernel.shared)

    def expr(self, e: Expr) -> int:
        if isinstance(e, Const):
            return e.value
        if isinstance(e, Tid):
            return self.thread[e.dim]
        if isinstance(e, (Param, Var)):
            return self.ints[e.name]
        a = self.expr(e.left)
        return c_op(e.op, a, self.expr(e.right) if isinstance(e, Bin) else e.const)

    def cond(self, c: Cmp) -> bool:
        a, b = self.expr(c.left), self.expr(c.right)
        return {"<": a < b, "<=": a <= b, "==": a == b, "!=": a != b, ">=": a >= b, ">": a > b}[c.op]

    def access(self, path: tuple, buffer: str, index: Expr, value=None, write=False) -> object:
        """Record one access; a read returns its value as a term (see `normalise_loads`)."""
        element = self.expr(index)
        if not self.replaying and (element < 0 or (buffer in self.sizes and element >= self.sizes[buffer])):
            raise IllDefined(f"{buffer}[{element}] out of bounds")
        phase = self.phases[space_of(buffer)]
        self.out.append(Access(self.thread, path, write, buffer, element, value, phase, self.epoch,
                               self.iters, self.seq))
        self.seq += 1
        if self.until is not None and self.until(self.out[-1]):
            raise Reached
        key = (buffer, element, phase)
        if write:
            self.own_writes[key] = self.own_writes.get(key, 0) + 1
        return ("load", buffer, element, phase, self.own_writes.get(key, 0))

    def value(self, v: Value, path: tuple) -> object:
        if isinstance(v, IntValue):
            return f32(float(self.expr(v.expr)))
        if isinstance(v, FConst):
            return v.value
        if isinstance(v, Load):
            return self.access(path, v.buffer, v.index)
        if isinstance(v, FLocal):
            return self.floats[v.name]
        a, b = self.value(v.left, path), self.value(v.right, path)
        if isinstance(a, float) and isinstance(b, float):
            return f32(a + b if v.op == "+" else a * b)
        return (v.op,) + tuple(sorted((a, b), key=repr))   # + and * commute

    def block(self, stmts: tuple, path: tuple) -> None:
        for i, s in enumerate(stmts):
            self.stmt(s, path + (i,))

    def stmt(self, s: Stmt, path: tuple) -> None:
        self.steps += 1
        if self.steps > self.max_steps:
            raise IllDefined(f"a thread runs more than {self.max_steps} statements")
        if isinstance(s, Store):
            value = self.value(s.value, path)   # the loads it needs come first
            self.access(path, s.buffer, s.index, value, write=True)
        elif isinstance(s, LoadLocal):
            self.floats[s.name] = self.access(path, s.buffer, s.index)
        elif isinstance(s, IntLocal):
            self.ints[s.name] = self.expr(s.expr)
        elif isinstance(s, Barrier):
            self.epoch += 1
            for space in barrier_spaces(self.dialect, s.spaces):
                self.phases[space] += 1
        elif isinstance(s, If):
            self.block(s.then, path + (0,)) if self.cond(s.cond) else self.block(s.orelse, path + (1,))
        else:
            self.loop(s, path)

    def loop(self, s: For | While, path: tuple) -> None:
        outer = self.iters
        self.ints[s.var] = self.expr(s.start)
        k = 0
        heads = set()
        while self.ints[s.var] < self.expr(s.bound):
            if k == self.max_trips:
                raise IllDefined(f"a loop runs more than {self.max_trips} iterations")
            if self.replaying and self.endless is None:
                # Control flow depends on int variables only: a loop whose head sees them as
                # before never ends (a step of 0). The replay notes it and runs on to its limit,
                # so that the iterations a witness names are still run.
                state = tuple(sorted(self.ints.items()))
                if state in heads:
                    self.endless = path
                heads.add(state)
            self.iters = outer + ((path, k),)
            self.block(s.body, path + (0,))
            self.ints[s.var] = c_int(self.ints[s.var] + self.expr(s.step))
            k += 1
        self.iters = outer


def threads(block: tuple) -> list[tuple]:
    x, y, z = block
    return [(i, j, k) for k in range(z) for j in range(y) for i in range(x)]


def run_oracle(kernel: Kernel, params: dict, dialect: str) -> list[Access]:
    """Every access of every thread of the block. Barriers are uniform by construction, so every
    thread reaches each one alike and a barrier interval is a count of barriers: a thread's
    accesses do not depend on the others'."""
    out: list[Access] = []
    epochs = set()
    for t in threads(kernel.block):
        run = ThreadRun(kernel, params, t, dialect, out)
        run.block(kernel.body, ())
        epochs.add(run.epoch)
    assert len(epochs) == 1, "barriers must be uniform"
    written, writers = versions(out), writers_by_phase(out)
    return [normalise_loads(a, written, writers) if a.write else a for a in out]


def versions(accesses: list[Access]) -> dict:
    """(buffer, element) -> sorted phases of the writes to it."""
    out: dict = {}
    for a in accesses:
        if a.write:
            out.setdefault((a.buffer, a.element), []).append(a.phase)
    for v in out.values():
        v.sort()
    return out


def writers_by_phase(accesses: list[Access]) -> dict:
    """(buffer, element, phase) -> the threads that write the element in that barrier interval."""
    out: dict = {}
    for a in accesses:
        if a.write:
            out.setdefault((a.buffer, a.element, a.phase), set()).add(a.thread)
    return out


def normalise_loads(a: Access, writes: dict, writers: dict) -> Access:
    """A loaded value is named by the element, how many writes to it precede its barrier interval,
    and how many of its own thread's writes to it precede it within the interval: what a race-free
    read sees. Two loads of an element nobody wrote in between load the same value. A load of an
    element another thread writes in the same interval races with that write, and may see it or
    not: its value is the loading thread's own, and what stores it is read-dependent (`RACY_LOAD`)."""
    def term(v):
        if not isinstance(v, tuple):
            return v
        if v[0] == "load":
            _, buffer, element, phase, own = v
            if writers.get((buffer, element, phase), set()) - {a.thread}:
                return (RACY_LOAD, buffer, element, phase, a.thread)
            return ("load", buffer, element, bisect.bisect_left(writes.get((buffer, element), []), phase), own)
        return v[:1] + tuple(sorted((term(x) for x in v[1:]), key=repr))
    return Access(a.thread, a.path, a.write, a.buffer, a.element, term(a.value), a.phase, a.epoch, a.iters, a.seq)


RACY_LOAD = "racy load"


def read_dependent(value) -> bool:
    """Does a stored value hold a load that races with another thread's write? Whether two such
    values differ depends on which write the load saw: the analysis takes the load race as the
    race (a read of an address gets one value unless a write races with it, which is reported:
    docs/how-it-works.md), so the stores' collision is neither a race it must report nor one it
    must not."""
    return isinstance(value, tuple) and (value[0] == RACY_LOAD or any(read_dependent(x) for x in value[1:]))


@dataclass(frozen=True)
class Collision:
    """Two accesses by different threads to one element in one barrier interval, one a write."""
    first: Access
    second: Access
    read_dependent: bool = False     # two writes that differ only through racy loads

    @property
    def harmful(self) -> bool:
        return not (self.first.write and self.second.write and self.first.value == self.second.value)


@dataclass
class OracleVerdict:
    racy: dict                 # buffer -> a harmful collision on it
    benign: dict               # buffer -> a same-value write-write collision (only those on it)
    touched: set               # buffers with any collision
    pairs: dict                # (path, path) -> a harmful collision between the two statements
    accesses: list
    # buffer -> writes that differ only through racy loads (`read_dependent`), on a buffer with no
    # harmful collision; and such pairs of statements
    read_dependent: dict = field(default_factory=dict)
    read_dependent_pairs: dict = field(default_factory=dict)


def other_thread_pair(xs: list, ys: list):
    """(x, y) from xs and ys by different threads, or None; linear time."""
    if not xs or not ys:
        return None
    y = next((y for y in ys if y.thread != xs[0].thread), None)
    if y is not None:
        return xs[0], y
    # Every y is by xs[0]'s thread: any x by another thread will do.
    x = next((x for x in xs if x.thread != xs[0].thread), None)
    return (x, ys[0]) if x is not None else None


def differing_writes(writes: list):
    """Two writes by different threads storing different values, or None; linear time."""
    if not writes:
        return None
    w0 = writes[0]
    w = next((w for w in writes if w.thread != w0.thread and w.value != w0.value), None)
    if w is not None:
        return w0, w
    # Every other thread stores w0's value: a different value can only be w0's thread's.
    odd = next((w for w in writes if w.value != w0.value), None)
    other = next((w for w in writes if w.thread != w0.thread), None)
    return (odd, other) if odd is not None and other is not None else None


def collision(group: list[Access]) -> Collision | None:
    """The worst collision in one (buffer, element, interval) group: a harmful one if any, else
    writes that differ only through racy loads, else same-value writes."""
    writes = [a for a in group if a.write]
    reads = [a for a in group if not a.write]
    pair = other_thread_pair(writes, reads) or differing_writes([w for w in writes if not read_dependent(w.value)])
    if pair:
        return Collision(*sorted(pair, key=lambda a: a.seq))
    pair = differing_writes(writes)
    if pair:
        return Collision(*sorted(pair, key=lambda a: a.seq), read_dependent=True)
    pair = other_thread_pair(writes, writes)
    return Collision(*sorted(pair, key=lambda a: a.seq)) if pair else None


def differing_pair(xs: list, ys: list):
    """(x, y) from two lists of writes, by different threads, storing different values; or None."""
    def by_value(accesses):
        out: dict = {}
        for a in accesses:
            out.setdefault(a.value, {}).setdefault(a.thread, a)
        return out
    for vx, tx in by_value(xs).items():
        for vy, ty in by_value(ys).items():
            if vx != vy:
                for t, x in tx.items():
                    y = next((y for u, y in ty.items() if u != t), None)
                    if y is not None:
                        return x, y
    return None


def harmful_pairs(accesses: list[Access]) -> tuple[dict, dict]:
    """({(path, path): a harmful collision between the two statements}, the same for pairs whose
    writes differ only through racy loads), paths in order: every pair of statements whose
    accesses race, one collision each."""
    groups: dict = {}
    for a in accesses:
        groups.setdefault((a.buffer, a.element, a.phase), []).append(a)
    out: dict = {}
    dependent: dict = {}
    for group in groups.values():
        classes: dict = {}
        for a in group:
            classes.setdefault((a.path, a.write), []).append(a)
        keys = sorted(classes)
        for i, k1 in enumerate(keys):
            for k2 in keys[i:]:
                pair = (k1[0], k2[0])
                if pair in out or not (k1[1] or k2[1]):
                    continue
                xs, ys = classes[k1], classes[k2]
                if not (k1[1] and k2[1]):
                    found = other_thread_pair(xs, ys)
                else:
                    found = differing_pair(*([a for a in c if not read_dependent(a.value)] for c in (xs, ys)))
                    if not found and pair not in dependent:
                        either = differing_pair(xs, ys)
                        if either:
                            dependent[pair] = Collision(*sorted(either, key=lambda a: a.seq), read_dependent=True)
                if found:
                    out[pair] = Collision(*sorted(found, key=lambda a: a.seq))
    return out, {p: c for p, c in dependent.items() if p not in out}


def judge(accesses: list[Access]) -> OracleVerdict:
    groups: dict = {}
    for a in accesses:
        groups.setdefault((a.buffer, a.element, a.phase), []).append(a)
    racy, benign, dependent = {}, {}, {}
    for (buffer, _, _), group in sorted(groups.items(), key=lambda kv: kv[0]):
        c = collision(group)
        if c is None:
            continue
        if c.read_dependent:
            dependent.setdefault(buffer, c)
        elif c.harmful:
            racy.setdefault(buffer, c)
        else:
            benign.setdefault(buffer, c)
    pairs, dependent_pairs = harmful_pairs(accesses)
    return OracleVerdict(racy, {b: c for b, c in benign.items() if b not in racy and b not in dependent},
                         set(racy) | set(benign) | set(dependent), pairs, accesses,
                         {b: c for b, c in dependent.items() if b not in racy}, dependent_pairs)


def oracle(kernel: Kernel, params: dict, dialect: str) -> OracleVerdict:
    return judge(run_oracle(kernel, params, dialect))


# ---------------------------------------------------------------- kernelrace on the emitted kernel


class HardTimeout(BaseException):
    """The per-call alarm (a BaseException, so that no handler in the code under test eats it)."""


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


def spirv_origins(spvasm: str) -> dict[int, int]:
    """Line of the disassembly -> line of the GLSL it came from (the `OpLine` in force)."""
    out, current = {}, None
    for n, text in enumerate(spvasm.splitlines(), 1):
        m = re.match(r"\s*OpLine %\w+ (\d+) \d+", text)
        if m:
            current = int(m.group(1))
        elif "OpNoLine" in text or "OpFunctionEnd" in text:
            current = None
        if current is not None:
            out[n] = current
    return out


class Subject:
    """One emitted kernel as kernelrace reads it. A GLSL shader is written to `workdir` and read
    the way `kernelrace check FILE.comp` reads it (glslangValidator, then the disassembly)."""

    def __init__(self, em: Emitted, block: tuple, workdir: Path):
        self.em, self.block, self.workdir = em, block, workdir
        if em.dialect == "glsl":
            path = workdir / "k.comp"
            path.write_text(em.text)
            self.text, self.lang, self.name = read_source(str(path), None)
            self.origins = spirv_origins(self.text)
        else:
            self.text, self.lang, self.name = em.text, em.dialect, f"k{SUFFIX[em.dialect]}"

    def check(self, defines: dict, options: Options) -> list:
        # A shader carries its block size in its LocalSize.
        block = None if self.lang == "spirv" else self.block
        results = check_text(self.text, self.lang, self.name, block, None, defines, options)
        return [f for r in results for f in r.findings]

    def source_line(self, line: int | None) -> int | None:
        """The emitted source's line of a line kernelrace reports (SPIR-V: the OpLine's)."""
        if line is None or self.lang != "spirv":
            return line
        return self.origins.get(line)

    def location_line(self, loc) -> int | None:
        if self.lang == "spirv":
            return loc.origin[1] if loc.origin else None
        return loc.line


def in_workdir(message: str, workdir: Path) -> str:
    """A message about the shader file without the temporary directory it was written to."""
    return message.replace(f"{workdir}/", "")


def analyser_options(kernel_timeout: float) -> Options:
    # Fix hints re-analyse the kernel for every finding: not what is measured here. The oracle runs
    # the threads of one block: races between blocks (--scope grid) are not its to judge.
    return Options(hints="off", kernel_timeout_s=kernel_timeout, scope="block")


# ---------------------------------------------------------------- witnesses

NOT_PERFORMED = "access not performed"
NOT_CONCURRENT = "accesses in different barrier intervals"


@dataclass(frozen=True)
class Replay:
    status: str                # ok | bad | inconclusive (the oracle could not follow a thread)
    reason: str = ""           # NOT_PERFORMED or NOT_CONCURRENT when bad
    detail: str = ""


@dataclass(frozen=True)
class Wanted:
    """One side of a witness: the access its thread must perform."""
    thread: tuple
    path: tuple | None         # the statement on the reported line (None: a line not ours)
    write: bool
    buffer: str
    element: int
    iters: tuple               # ((loop path, iteration), ...) the witness names
    absent: str                # what to say when the thread does not perform it

    def matches(self, a: Access) -> bool:
        return (a.buffer == self.buffer and a.element == self.element and a.write == self.write
                and (self.path is None or a.path == self.path) and set(self.iters) <= set(a.iters))


def wanted(side: str, loc, w: dict, subject: Subject, buffer: str) -> Wanted:
    thread = tuple(w[f"{side}_thread"])
    line = subject.location_line(loc)
    # Iterations are keyed by the loop's line (SPIR-V: of its OpLoopMerge); a loop not mapped
    # back to one of ours constrains nothing.
    by_line = {subject.source_line(int(key)): k for key, k in (w.get(f"{side}_iterations") or {}).items()}
    iters = tuple((subject.em.loops[n], k) for n, k in by_line.items() if n in subject.em.loops)
    where = f" at line {line}" if line is not None else ""
    its = f" in iterations {{{', '.join(f'line {n}: {k}' for n, k in by_line.items())}}}" if by_line else ""
    return Wanted(thread, subject.em.lines.get(line), loc.kind == "write", buffer, w["element"], iters,
                  f"thread {thread} does not {loc.kind} {buffer}[{w['element']}]{where}{its}")


def follow(kernel: Kernel, params: dict, dialect: str, want: Wanted, first_only: bool):
    """(the wanted thread's accesses matching `want`, the loop it is proven stuck in, why else it
    stopped early): the thread runs until it performs the access (`first_only`) or ends."""
    out: list[Access] = []
    run = ThreadRun(kernel, params, want.thread, dialect, out, replaying=True,
                    until=want.matches if first_only else None)
    stuck, stopped = None, ""
    try:
        run.block(kernel.body, ())
    except Reached:
        pass
    except IllDefined as exc:
        stuck, stopped = run.endless, "" if run.endless is not None else str(exc)
    return [a for a in out if want.matches(a)], stuck, stopped


def replay(finding, subject: Subject, kernel: Kernel, params: dict, dialect: str) -> Replay:
    """Does the witness's pair of accesses happen in the oracle, run on the witness's parameter
    values: each thread performs its access (statement, kind, element, the witness's
    iterations), and the two share a barrier interval?"""
    w = finding.witness
    values = dict(params)
    values.update({k: v for k, v in (w.get("params") or {}).items() if k in kernel.params})
    shown = ", ".join(f"{k}={v}" for k, v in values.items())
    sides = [wanted(side, loc, w, subject, finding.second.buffer)
             for side, loc in (("first", finding.first), ("second", finding.second))]
    found = []
    for want in sides:
        accesses, stuck, stopped = follow(kernel, values, dialect, want, first_only=True)
        if stopped:
            return Replay("inconclusive", detail=f"with {shown}, thread {want.thread}: {stopped}")
        if not accesses:
            loops = {p: n for n, p in subject.em.loops.items()}
            why = f" (with {shown} it loops forever at line {loops[stuck]})" if stuck else ""
            return Replay("bad", NOT_PERFORMED, want.absent + why)
        found.append(accesses)
    if found[0][0].phase != found[1][0].phase:
        # The witness may leave an iteration open: any instance of each access will do.
        found = [follow(kernel, values, dialect, want, first_only=False)[0] for want in sides]
        if not any(a.phase == b.phase for a in found[0] for b in found[1]):
            return Replay("bad", NOT_CONCURRENT, "; ".join(
                f"{side} at interval(s) {sorted({a.phase for a in accesses})}"
                for side, accesses in zip(("first", "second"), found)))
    return Replay("ok")


# ---------------------------------------------------------------- comparing the two


@dataclass
class ModeResult:
    """kernelrace against the oracle on one kernel, in one dialect and mode."""
    dialect: str
    mode: str
    status: str = "checked"    # checked | rejected | crashed | timeout
    message: str = ""
    verdict: str = ""          # kernelrace's findings, summarised
    found: list = field(default_factory=list)            # racy buffers with a race finding
    seen: list = field(default_factory=list)             # ... only races seen in a run (observed.py)
    unknown: list = field(default_factory=list)          # racy buffers with only an `unknown` finding
    missed: list = field(default_factory=list)           # racy buffers without a finding
    missed_pairs: list = field(default_factory=list)     # racy statement pairs no finding names
    false_alarms: list = field(default_factory=list)     # findings where the oracle sees no collision
    benign_reported: list = field(default_factory=list)  # findings on buffers with same-value races only
    unknown_findings: int = 0
    bad_witnesses: list = field(default_factory=list)           # (why, description)
    inconclusive_witnesses: list = field(default_factory=list)
    seconds: float = 0.0


@dataclass(frozen=True)
class Failure:
    kind: str                  # missed | missed pair | witness | false alarm | rejected | crashed | timeout
    dialect: str
    mode: str
    what: str                  # the race's memory space and kinds (missed), why a witness does not
    detail: str                # replay, the message's shape (rejected, crashed, timeout)

    @property
    def signature(self) -> tuple:
        """What counts as the same failure: shrinking keeps it, the report groups by it."""
        return self.kind, self.what


def stmt_at(kernel: Kernel, path: tuple) -> Stmt:
    s = kernel.body[path[0]]
    for branch, i in zip(path[1::2], path[2::2]):
        s = (s.orelse if isinstance(s, If) and branch == 1 else s.then if isinstance(s, If) else s.body)[i]
    return s


def describe_access(a: Access, kernel: Kernel, em: Emitted) -> str:
    lines = {p: n for n, p in em.lines.items()}
    iters = ", ".join(f"{stmt_at(kernel, p).var} iteration {k}" for p, k in a.iters)
    return (f"thread {a.thread} {'writes' if a.write else 'reads'} at line {lines[a.path]}"
            + (f" ({iters})" if iters else "") + (f" value {a.value}" if a.write else ""))


def describe_collision(c: Collision, kernel: Kernel, em: Emitted) -> str:
    return (f"{c.first.buffer}[{c.first.element}] in barrier interval {c.first.phase}: "
            f"{describe_access(c.first, kernel, em)}; {describe_access(c.second, kernel, em)}")


def summarise(findings: list, subject: Subject) -> str:
    shown = [f"{f.rule} on {f.second.buffer} (line {subject.location_line(f.second)})"
             for f in findings if f.severity != "note"]
    return "; ".join(shown) or "clean"


def shape(message: str) -> str:
    """A message with its names and numbers blanked: what groups rejections together."""
    return re.sub(r"\b\w*\d\w*\b|'[^']*'|`[^`]*`", "_", message.split(": ", 1)[-1])[:100]


def run_kernelrace(subject: Subject, defines: dict, kernel_timeout: float, result: ModeResult) -> list | None:
    """kernelrace's findings, or None with `result` saying why there are none."""
    try:
        with hard_limit(HARD_TIMEOUT_FACTOR * kernel_timeout):
            return subject.check(defines, analyser_options(kernel_timeout))
    except KernelraceError as exc:
        result.status, result.message = "rejected", in_workdir(str(exc), subject.workdir)
    except HardTimeout as exc:
        result.status, result.message = "timeout", str(exc)
    except Exception as exc:  # a crash of the code under test is a finding of this harness
        if f"{HardTimeout.__name__}: " in str(exc):
            # The alarm went off inside a ctypes call into Z3, which wraps what a callback (the
            # signal handler) raises in its own ArgumentError: the timeout still.
            result.status, result.message = "timeout", str(exc).rsplit(": ", 1)[-1]
            return None
        where = traceback.extract_tb(exc.__traceback__)[-1]
        result.status = "crashed"
        result.message = f"{type(exc).__name__} at {Path(where.filename).name}:{where.lineno}: {exc}"
    return None


def compare(findings: list, verdict: OracleVerdict, result: ModeResult, subject: Subject, case: Case) -> None:
    rules: dict[str, set] = {}
    for f in findings:
        rules.setdefault(f.second.buffer, set()).add(f.rule)
    for b in sorted(verdict.racy):
        got = rules.get(b, set())
        (result.found if got & RACE_RULES else result.unknown if "unknown" in got else result.missed).append(b)
        if got & RACE_RULES and all((f.witness or {}).get("observed") for f in findings
                                    if f.second.buffer == b and f.rule in RACE_RULES):
            result.seen.append(b)
    # A race found on a buffer hides any other race on it from the per-buffer count: every racy
    # pair of statements must be named by a finding too (on a buffer not missed altogether).
    # A pair an `unknown` finding names (the solver's budget ran out on it, as under a loaded
    # machine) is said undecided, not missed: it is counted with the unknown findings.
    named = {tuple(sorted((subject.location_line(f.first), subject.location_line(f.second))))
             for f in findings if f.rule in RACE_RULES or (f.rule == "unknown" and f.first is not None)}
    lines = {p: n for n, p in subject.em.lines.items()}
    for (pa, pb), c in sorted(verdict.pairs.items()):
        if tuple(sorted((lines[pa], lines[pb]))) not in named and c.first.buffer in result.found:
            result.missed_pairs.append(c)
    result.unknown_findings = sum(f.rule == "unknown" for f in findings)
    for f in findings:
        if result.mode == "define" and (f.rule in RACE_RULES or f.rule == "divergent-barrier"):
            # Every generated barrier is uniform: a divergent-barrier finding is a false alarm too;
            # so is one naming a read where the only collisions are same-value writes.
            if f.second.buffer in verdict.benign and f.rule == "write-after-write":
                result.benign_reported.append(f"{f.rule} on {f.second.buffer}")
            elif f.second.buffer not in verdict.racy and f.second.buffer not in verdict.read_dependent:
                result.false_alarms.append(f"{f.rule} on {f.second.buffer}")
        if f.rule in RACE_RULES and f.witness:
            r = replay(f, subject, case.kernel, case.params, result.dialect)
            text = f"{f.rule} on {f.second.buffer} (line {subject.location_line(f.second)}): {r.reason}" \
                   f"{': ' if r.reason else ''}{r.detail}; witness {f.witness}"
            if r.status == "bad":
                # A witness kernelrace itself marks as not validated is told apart from one it vouches for.
                flagged = " (kernelrace: not validated)" if f.witness.get("replayed") is False else ""
                result.bad_witnesses.append((r.reason + flagged, text))
            elif r.status == "inconclusive":
                result.inconclusive_witnesses.append(text)


def check_mode(subject: Subject, case: Case, verdict: OracleVerdict, mode: str, kernel_timeout: float) -> ModeResult:
    result = ModeResult(subject.em.dialect, mode)
    used = used_params(case.kernel)
    defines = {p: v for p, v in case.values if p in used} if mode == "define" else {}
    t0 = time.perf_counter()
    findings = run_kernelrace(subject, defines, kernel_timeout, result)
    if findings is not None:
        result.verdict = summarise(findings, subject)
        compare(findings, verdict, result, subject, case)
    result.seconds = time.perf_counter() - t0
    return result


def race_kind(c: Collision) -> str:
    """What tells missed races apart: memory space, access kinds, and whether the two accesses
    are one statement in one iteration, one statement in two, or two statements."""
    a, b = c.first, c.second
    where = ("two statements" if a.path != b.path else "one statement, one iteration" if a.iters == b.iters
             else "one statement, two iterations")
    return f"{space_of(a.buffer)} {'write-write' if a.write and b.write else 'read-write'}, {where}"


def failures_of(result: ModeResult, case: Case, verdict: OracleVerdict, em: Emitted) -> list[Failure]:
    d, m = result.dialect, result.mode
    out = [Failure(result.status, d, m, shape(result.message), result.message)] if result.status != "checked" else []
    for b in result.missed:
        out.append(Failure("missed", d, m, race_kind(verdict.racy[b]),
                           f"oracle: {describe_collision(verdict.racy[b], case.kernel, em)}; "
                           f"kernelrace: {result.verdict}"))
    for c in result.missed_pairs:
        out.append(Failure("missed pair", d, m, race_kind(c),
                           f"oracle: {describe_collision(c, case.kernel, em)}; kernelrace: {result.verdict}"))
    out += [Failure("witness", d, m, why, text) for why, text in result.bad_witnesses]
    # Counted and kept (saved with the others) so each can be looked at, never failed on.
    out += [Failure("false alarm", d, m, what.split(" on ")[0], f"{what}; oracle: no harmful race on it; "
                    f"kernelrace: {result.verdict}") for what in result.false_alarms]
    return out


def header(case: Case, dialect: str, mode: str, note: str = "") -> list[str]:
    args = ["--scope", "block"] + ([] if dialect == "glsl" else ["--block-dim", ",".join(map(str, case.kernel.block))])
    if mode == "define":
        used = used_params(case.kernel)
        args += [x for p, v in case.values if p in used for x in ("--scalar", f"{p}={v}")]
    values = ", ".join(f"{p}={v}" for p, v in case.values) or "none"
    return [f"// kernelrace-args: {' '.join(args)}".rstrip(),
            f"// differential ({mode}): oracle parameters {values}. {note}".rstrip()]


@dataclass
class DialectRun:
    """One kernel in one dialect: the oracle's verdict and kernelrace's, per mode."""
    racy: list
    benign: list
    results: list
    failures: list
    seconds: float


def check_dialect(case: Case, dialect: str, verdict: OracleVerdict, workdir: Path, kernel_timeout: float,
                  modes=MODES) -> DialectRun:
    t0 = time.perf_counter()
    em = emit(case.kernel, dialect, header(case, dialect, "symbolic"))
    results = []
    try:
        subject = Subject(em, case.kernel.block, workdir)
    except KernelraceError as exc:   # glslangValidator refused the shader
        results = [ModeResult(dialect, m, "rejected", in_workdir(str(exc), workdir)) for m in modes]
    else:
        for m in modes:
            if results and not used_params(case.kernel):
                # Without parameters both modes are one run (false alarms count in one mode).
                results.append(dataclasses.replace(results[0], mode=m, false_alarms=[], benign_reported=[]))
            else:
                results.append(check_mode(subject, case, verdict, m, kernel_timeout))
    failures = [f for r in results for f in failures_of(r, case, verdict, em)]
    return DialectRun(sorted(verdict.racy), sorted(verdict.benign), results, failures, time.perf_counter() - t0)


# ---------------------------------------------------------------- evaluating one kernel


@dataclass
class KernelRecord:
    seed: int                  # the campaign's
    chunk: int
    chunk_size: int            # the chunk's max_examples (hypothesis draws differently for another)
    call: int                  # which call of its chunk's hypothesis run drew it
    runs: dict                 # dialect -> DialectRun
    case: Case | None = None   # kept when it failed: to save it and shrink it

    @property
    def failures(self) -> list[Failure]:
        return [f for r in self.runs.values() for f in r.failures]


def check_constant_indices(kernel: Kernel) -> None:
    """glslang folds a constant index and rejects a negative one, even in code that never runs:
    such a kernel is not well defined either."""
    run = ThreadRun(kernel, {}, (0, 0, 0), "cuda", [])
    for n in nodes(kernel.body):
        if isinstance(n, (Store, LoadLocal, Load)) and space_of(n.buffer) == GLOBAL \
                and not any(isinstance(a, (Tid, Param, Var)) for a in nodes(n.index)):
            index = run.expr(n.index)
            if index < 0:
                raise IllDefined(f"{n.buffer}[{index}] in the source")


def verdicts(case: Case, dialects) -> dict | None:
    """The oracle's verdict per dialect (barrier scopes differ), or None when the kernel is not
    well defined for the case's parameter values."""
    try:
        check_constant_indices(case.kernel)
        return {d: oracle(case.kernel, case.params, d) for d in dialects}
    except IllDefined:
        return None


def evaluate(case: Case, oracle_verdicts: dict, workdir: Path, kernel_timeout: float, modes=MODES) -> dict:
    return {d: check_dialect(case, d, v, workdir, kernel_timeout, modes) for d, v in oracle_verdicts.items()}


def run_hypothesis(seed: int, count: int, body: Callable[[Case], None], shrink: bool = False) -> None:
    """Call `body` on `count` well-defined kernels drawn by hypothesis from `seed` (the same seed
    draws the same kernels); with `shrink`, a kernel on which `body` raises is shrunk."""
    @hypothesis_seed(seed)
    @settings(max_examples=count, phases=[Phase.generate, Phase.shrink] if shrink else [Phase.generate],
              database=None, deadline=None, derandomize=False, report_multiple_bugs=False,
              suppress_health_check=list(HealthCheck), verbosity=Verbosity.quiet)
    @given(cases())
    def run(case):
        body(case)

    run()


def chunk_seed(seed: int, chunk: int) -> int:
    return seed * 1_000_003 + chunk


@dataclass
class ChunkResult:
    records: list
    ill_defined: int           # draws the oracle refused (regenerated by hypothesis)
    seconds: float


def explore_chunk(seed: int, chunk: int, count: int, dialects: tuple, kernel_timeout: float) -> ChunkResult:
    records, calls, ill, seen = [], 0, 0, set()
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="kernelrace-differential-") as tmp:
        def body(case: Case) -> None:
            nonlocal calls, ill
            calls += 1
            v = verdicts(case, dialects)
            if v is None:
                ill += 1
            if v is None or not fresh(case, seen):
                reject()
            rec = KernelRecord(seed, chunk, count, calls, evaluate(case, v, Path(tmp), kernel_timeout))
            rec.case = case if rec.failures else None
            records.append(rec)

        run_hypothesis(chunk_seed(seed, chunk), count, body)
    return ChunkResult(records, ill, time.perf_counter() - t0)


def fresh(case: Case, seen: set) -> bool:
    """Whether `case` is new to this run (hypothesis draws some kernels twice: a duplicate is
    rejected, so that a chunk holds `count` different kernels)."""
    if case in seen:
        return False
    seen.add(case)
    return True


class Reproduced(Exception):
    """Raised on a kernel that shows the failure being shrunk."""


def shrink_failure(record: KernelRecord, failure: Failure, kernel_timeout: float, budget_s: float) -> Case:
    """The smallest kernel hypothesis finds with the same failure signature: the record's chunk is
    drawn again from its seed (analysing nothing) up to the record's kernel, from which hypothesis
    shrinks. After `budget_s` only the smallest kernel so far counts as failing, which ends it."""
    calls, state, best, deadline, seen = 0, "replaying", None, 0.0, set()

    def body(case: Case) -> None:
        nonlocal calls, state, best, deadline
        calls += 1
        if state == "replaying":
            if calls < record.call:
                if verdicts(case, ("cuda",)) is None or not fresh(case, seen):   # as the first run did
                    reject()
                return
            # Drawn differently (it should not be), the original kernel stays the answer.
            state = "shrinking" if case == record.case else "done"
            deadline = time.monotonic() + budget_s
        if state == "done":
            return
        v = verdicts(case, (failure.dialect,))
        if v is None:
            reject()
        if time.monotonic() > deadline:
            if case == best:
                raise Reproduced
            return
        races = v[failure.dialect].racy if failure.kind == "missed" else v[failure.dialect].pairs
        if failure.kind.startswith("missed") and failure.what not in map(race_kind, races.values()):
            return             # no such race left to miss: kernelrace need not be asked
        with tempfile.TemporaryDirectory(prefix="kernelrace-differential-") as tmp:
            run = check_dialect(case, failure.dialect, v[failure.dialect], Path(tmp), kernel_timeout,
                                (failure.mode,))
        if any(f.signature == failure.signature for f in run.failures):
            best = case
            raise Reproduced
        if calls == record.call:
            state = "done"     # the failure did not show again (a timeout does not always)

    with contextlib.suppress(Exception):
        run_hypothesis(chunk_seed(record.seed, record.chunk), record.chunk_size, body, shrink=True)
    return best or record.case


# ---------------------------------------------------------------- the campaign

# Per dialect and mode: racy buffers (oracle) found by a race finding (of them, those found only by
# races seen in a run of the block, as the oracle runs it: analysis/witness/observed.py), by an `unknown`
# one only, or missed; racy statement pairs no finding names on a buffer found; every `unknown` finding; with `--scalar` only, false alarms (a finding on a buffer
# without a harmful race, but a write-after-write where only same-value writes collide, which is
# a benign race reported); witnesses; kernels kernelrace gave no verdict on.
COLUMNS = ("racy buffers", "found", "seen in a run", "only unknown", "missed", "missed pairs", "unknown findings", "false alarms",
           "benign reported", "bad witnesses", "inconclusive witnesses", "rejected", "crashed", "timeout")


@dataclass
class Campaign:
    seed: int
    dialects: tuple
    kernels: int = 0
    checked: Counter = field(default_factory=Counter)       # dialect -> kernels checked in it
    ill_defined: int = 0
    seconds: float = 0.0
    racy: Counter = field(default_factory=Counter)          # dialect -> kernels with a harmful race
    benign_only: Counter = field(default_factory=Counter)   # dialect -> kernels with only benign races
    counts: dict = field(default_factory=dict)              # (dialect, mode) -> Counter over COLUMNS
    times: dict = field(default_factory=dict)               # dialect -> seconds per kernel checked
    failing: list = field(default_factory=list)             # KernelRecords with failures

    def add(self, chunk: ChunkResult) -> None:
        self.ill_defined += chunk.ill_defined
        for rec in chunk.records:
            self.kernels += 1
            for d, run in rec.runs.items():
                self.checked[d] += 1
                self.racy[d] += bool(run.racy)
                self.benign_only[d] += not run.racy and bool(run.benign)
                self.times.setdefault(d, []).append(run.seconds)
                for r in run.results:
                    self.count(r, len(run.racy))
            if rec.failures:
                self.failing.append(rec)

    def count(self, r: ModeResult, racy: int) -> None:
        c = self.counts.setdefault((r.dialect, r.mode), Counter())
        c["racy buffers"] += racy
        c["unknown findings"] += r.unknown_findings
        for column, items in (("found", r.found), ("seen in a run", r.seen), ("only unknown", r.unknown),
                              ("missed", r.missed),
                              ("missed pairs", r.missed_pairs),
                              ("false alarms", r.false_alarms), ("benign reported", r.benign_reported),
                              ("bad witnesses", r.bad_witnesses), ("inconclusive witnesses", r.inconclusive_witnesses)):
            c[column] += len(items)
        c[r.status] += r.status != "checked"

    def signatures(self) -> dict:
        """Failure signature -> [(record, failure), ...] in the order found."""
        out: dict = {}
        for rec in sorted(self.failing, key=lambda r: (r.chunk, r.call)):
            for f in rec.failures:
                out.setdefault(f.signature, []).append((rec, f))
        return out


def limit_memory() -> None:
    """A worker that grows past WORKER_MEMORY fails its chunk instead of swapping the machine."""
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    resource.setrlimit(resource.RLIMIT_AS, (WORKER_MEMORY if hard == resource.RLIM_INFINITY
                                            else min(WORKER_MEMORY, hard), hard))


def _explore(args) -> ChunkResult:
    return explore_chunk(*args)


def failures_in(case: Case, dialect: str, mode: str, kernel_timeout: float) -> list[Failure]:
    v = verdicts(case, (dialect,))
    if v is None:
        return []
    with tempfile.TemporaryDirectory(prefix="kernelrace-differential-") as tmp:
        return check_dialect(case, dialect, v[dialect], Path(tmp), kernel_timeout, (mode,)).failures


@dataclass
class Shrunk:
    case: Case
    failure: Failure           # the shrunk kernel's failure of the signature (its own detail)


def _shrink(args) -> tuple:
    record, failure, kernel_timeout, budget = args
    case = shrink_failure(record, failure, kernel_timeout, budget)
    again = [f for f in failures_in(case, failure.dialect, failure.mode, kernel_timeout)
             if f.signature == failure.signature]
    return failure.signature, Shrunk(case, again[0] if again else failure)


def pool(jobs: int):
    # A fresh process per task: whatever a kernel leaves behind in z3 or the caches goes with it.
    return multiprocessing.get_context("fork").Pool(jobs, initializer=limit_memory, maxtasksperchild=1)


def run_campaign(kernels: int, seed: int, dialects: tuple, jobs: int, kernel_timeout: float,
                 progress: Callable[[str], None] = lambda s: None, chunk: int = CHUNK,
                 rotate: bool = False) -> Campaign:
    """`kernels` kernels drawn from `seed` in chunks of `chunk`, each checked in every dialect,
    or with `rotate` in one (the chunk's turn): a third of the cost for as many kernels."""
    camp = Campaign(seed, dialects)
    sizes = [min(chunk, kernels - start) for start in range(0, kernels, chunk)]
    tasks = [(seed, i, n, (dialects[i % len(dialects)],) if rotate else dialects, kernel_timeout)
             for i, n in enumerate(sizes)]
    t0 = time.perf_counter()
    with pool(jobs) as p:
        for done, chunk in enumerate(p.imap_unordered(_explore, tasks), 1):
            camp.add(chunk)
            progress(f"chunk {done}/{len(tasks)}: {camp.kernels} kernels, {len(camp.failing)} failing, "
                     f"{time.perf_counter() - t0:.0f} s")
    camp.seconds = time.perf_counter() - t0
    return camp


def representatives(pairs: list, k: int) -> list:
    """Up to k failures of one signature, from as many dialects and modes as there are."""
    chosen, seen = [], set()
    for rec, f in pairs:
        if (f.dialect, f.mode) not in seen and len(chosen) < k:
            seen.add((f.dialect, f.mode))
            chosen.append((rec, f))
    return chosen


def shrink_all(camp: Campaign, jobs: int, kernel_timeout: float, budget_s: float, per_signature: int,
               kinds=None) -> dict:
    """Signature -> [Shrunk]: up to `per_signature` failures of each signature (of `kinds`, or
    all), shrunk; not a timeout, where each try would cost the whole limit."""
    tasks = [(rec, f, kernel_timeout, budget_s)
             for sig, pairs in camp.signatures().items()
             if sig[0] != "timeout" and (kinds is None or sig[0] in kinds)
             for rec, f in representatives(pairs, per_signature)]
    out: dict = {}
    if tasks:
        with pool(jobs) as p:
            for sig, shrunk in p.imap(_shrink, tasks):
                out.setdefault(sig, []).append(shrunk)
    return out


# ---------------------------------------------------------------- fixtures and the report


def expected_rules(verdict: OracleVerdict, em: Emitted) -> dict[int, set]:
    """line -> rules the oracle's races call for, named as kernelrace names them: by which access
    a thread would execute first, on the line of the second (barrier-scope when only a barrier
    of another memory space lies between). A guide for a fixture's `// expect:`, to review."""
    lines = {p: n for n, p in em.lines.items()}
    out: dict[int, set] = {}
    for c in verdict.pairs.values():
        a, b = c.first, c.second
        rule = ("barrier-scope" if a.epoch != b.epoch else "write-after-write" if a.write and b.write
                else "read-after-write" if a.write else "write-after-read")
        out.setdefault(lines[b.path], set()).add(rule)
    return out


def fixture_text(case: Case, failure: Failure, provenance: str) -> str:
    verdict = oracle(case.kernel, case.params, failure.dialect)
    em = emit(case.kernel, failure.dialect, header(case, failure.dialect, failure.mode, provenance))
    lines = em.text.splitlines()
    for n, rules in expected_rules(verdict, em).items():
        lines[n - 1] += f"   // expect: {', '.join(sorted(rules))}"
    detail = [f"// {failure.kind} ({failure.dialect}, {failure.mode}): " + failure.detail.replace("\n", " "),
              "// The expectations are the oracle's races for the parameter values above, named as kernelrace",
              "// would name them: review them before this file joins tests/fixtures."]
    return "\n".join(lines + detail) + "\n"


def save_failures(camp: Campaign, shrunk: dict, out: Path) -> list[Path]:
    """Each failing kernel as a fixture (`// kernelrace-args:` first, the oracle's expectations on
    their lines, what failed at the end), and the shrunk kernel of each signature beside it."""
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for sig, pairs in camp.signatures().items():
        slug = re.sub(r"\W+", "_", "-".join(sig))[:80].strip("_")
        for rec, f in pairs:
            where = f"{f.dialect}-{f.mode}-s{camp.seed}-c{rec.chunk}-n{rec.call}"
            path = out / f"{slug}-{where}{SUFFIX[f.dialect]}"
            path.write_text(fixture_text(rec.case, f, f"seed {camp.seed}, chunk {rec.chunk}, kernel {rec.call}"))
            written.append(path)
        for i, m in enumerate(shrunk.get(sig, [])):
            path = out / f"{slug}-min{i}-{m.failure.dialect}-{m.failure.mode}{SUFFIX[m.failure.dialect]}"
            path.write_text(fixture_text(m.case, m.failure, f"shrunk, seed {camp.seed}"))
            written.append(path)
    return written


def summary(camp: Campaign) -> list[str]:
    out = [f"kernels: {camp.kernels} (seed {camp.seed}; {camp.ill_defined} ill-defined draws regenerated); checked: "
           + ", ".join(f"{d} {camp.checked[d]}" for d in camp.dialects),
           "racy kernels (oracle): " + ", ".join(f"{d} {camp.racy[d]}" for d in camp.dialects)
           + "; only benign races: " + ", ".join(f"{d} {camp.benign_only[d]}" for d in camp.dialects)]
    out.append(f"{'':16}" + "".join(f"{c:>{len(c) + 2}}" for c in COLUMNS))
    total: Counter = Counter()
    for d in camp.dialects:
        for m in MODES:
            c = camp.counts.get((d, m), Counter())
            total.update(c)
            out.append(f"{d + ' ' + m:16}" + "".join(f"{c[col]:>{len(col) + 2}}" for col in COLUMNS))
    out.append(f"{'total':16}" + "".join(f"{total[col]:>{len(col) + 2}}" for col in COLUMNS))
    out.append(f"time: {camp.seconds:.0f} s; per kernel and dialect, both modes and the oracle (mean, median, max):")
    for d in camp.dialects:
        ts = sorted(camp.times.get(d, [0.0]))
        out.append(f"  {d}: {sum(ts) / len(ts):.2f} s, {ts[len(ts) // 2]:.2f} s, {ts[-1]:.1f} s")
    return out


def failure_list(camp: Campaign, shrunk: dict, kinds=None) -> list[str]:
    """Each distinct failure (of `kinds`, or all): where it showed, and its shrunk kernels (or
    its first kernel) with what failed on them."""
    sigs = {sig: pairs for sig, pairs in camp.signatures().items() if kinds is None or sig[0] in kinds}
    out = [f"distinct failures: {len(sigs)}"]
    for sig, pairs in sigs.items():
        where = Counter(f"{f.dialect} {f.mode}" for _, f in pairs)
        out.append(f"- {sig[0]} [{sig[1]}]: {len({(r.chunk, r.call) for r, _ in pairs})} kernel(s); "
                   + ", ".join(f"{k} {n}" for k, n in where.items()))
        shown = [(m.case, m.failure, "shrunk, ") for m in shrunk.get(sig, [])] or [(pairs[0][0].case, pairs[0][1], "")]
        texts = set()
        for case, f, how in shown:
            text = emit(case.kernel, f.dialect, header(case, f.dialect, f.mode)).text
            if text not in texts:
                texts.add(text)
                out.append(f"  ({how}{f.dialect} {f.mode}) {f.detail}")
                out += ["    | " + ln for ln in text.splitlines()]
    return out


def report(camp: Campaign, shrunk: dict) -> str:
    return "\n".join(summary(camp) + failure_list(camp, shrunk))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--kernels", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--dialects", default=",".join(DIALECTS))
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--chunk", type=int, default=CHUNK, help="kernels per hypothesis run (the draw depends on it)")
    ap.add_argument("--rotate-dialects", action="store_true",
                    help="check each chunk in one dialect, in turn, instead of every kernel in all")
    ap.add_argument("--kernel-timeout", type=float, default=KERNEL_TIMEOUT_S,
                    help="kernelrace's --kernel-timeout per kernel (a call is cut off at three times this)")
    ap.add_argument("--shrink-seconds", type=float, default=60.0,
                    help="time to shrink one failing kernel (0: do not shrink)")
    ap.add_argument("--shrink-per-signature", type=int, default=2,
                    help="failing kernels shrunk per distinct failure, from different dialects and modes")
    ap.add_argument("--save-failures", type=Path, metavar="DIR")
    args = ap.parse_args(argv)
    dialects = tuple(d for d in args.dialects.split(",") if d)
    unknown = set(dialects) - set(DIALECTS)
    if unknown:
        ap.error(f"unknown dialect(s) {', '.join(sorted(unknown))} (choose from {', '.join(DIALECTS)})")
    camp = run_campaign(args.kernels, args.seed, dialects, args.jobs, args.kernel_timeout,
                        progress=lambda s: print(s, file=sys.stderr, flush=True), chunk=args.chunk,
                        rotate=args.rotate_dialects)
    shrunk = (shrink_all(camp, args.jobs, args.kernel_timeout, args.shrink_seconds, args.shrink_per_signature)
              if args.shrink_seconds > 0 else {})
    print(report(camp, shrunk))
    if args.save_failures:
        written = save_failures(camp, shrunk, args.save_failures)
        print(f"{len(written)} fixture(s) written to {args.save_failures}")
    return 1 if camp.failing else 0


if __name__ == "__main__":
    sys.exit(main())
