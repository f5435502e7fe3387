"""Differential testing of kernelrace against a brute-force oracle on small random kernels.

A kernel is a small abstract program (the dataclasses below), drawn by hypothesis strategies so a
failing kernel shrinks to a minimal one. It is emitted as CUDA, Metal and a GLSL compute shader,
and evaluated directly by the oracle: every thread of one block is run on concrete parameter
values with C's 32-bit integer semantics, every memory access is recorded, and a race is decided
exactly (two threads, one element, at least one write, no barrier ordering that memory space
between them). kernelrace (in-process) checks each emitted kernel twice, with the oracle's
parameter values given by `--define` and with the parameters symbolic. A buffer the oracle finds
racy without a finding on it is a missed race; every finding's witness is replayed in the oracle.

    python benchmarks/differential.py --kernels N --seed S [--dialects cuda,metal,glsl] [--jobs J]
                                      [--save-failures DIR] [--shrink-seconds T] [--kernel-timeout T]

The campaign is deterministic in its seed (not in --jobs): kernels are drawn in chunks of
CHUNK, each by one hypothesis run seeded from (seed, chunk). A failure is shrunk by running its
chunk again with the same seed up to the failing kernel and letting hypothesis shrink it against
the same failure. tests/test_differential.py runs a pinned slice of the same engine.
"""

from __future__ import annotations

import argparse
import bisect
import contextlib
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
PARAM_VALUES = (0, 5)          # the oracle's parameter values are drawn from this range
MAX_TRIPS = 64                 # iterations of one loop entry the oracle runs before giving up
MAX_STEPS = 4096               # statements one thread may execute in the oracle
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
    op: str                    # + - * between two expressions
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
    return SHARED if buffer.startswith("s") else GLOBAL


# ---------------------------------------------------------------- the generator

ALL = frozenset({SHARED, GLOBAL})
BARRIER_SPACES = (ALL, frozenset({SHARED}), frozenset({GLOBAL}), frozenset())
CMP_OPS = ("<", "==", "!=", "<=", ">", ">=")
MAX_DEPTH = 2                  # nesting of loops and branches


@dataclass(frozen=True)
class Scope:
    """What a statement being drawn may use, and whether every thread executes it alike."""
    params: tuple
    globals: tuple
    shared: tuple
    ints: tuple = ()           # ((name, uniform), ...): int variables in scope
    floats: tuple = ()         # float locals in scope
    uniform: bool = True       # no enclosing condition or loop depends on the thread
    depth: int = 0

    def with_int(self, name: str, uniform: bool) -> "Scope":
        return Scope(self.params, self.globals, self.shared, self.ints + ((name, uniform),), self.floats,
                     self.uniform, self.depth)

    def with_float(self, name: str) -> "Scope":
        return Scope(self.params, self.globals, self.shared, self.ints, self.floats + (name,),
                     self.uniform, self.depth)

    def nested(self, uniform: bool) -> "Scope":
        return Scope(self.params, self.globals, self.shared, self.ints, self.floats,
                     self.uniform and uniform, self.depth + 1)


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


def draw_expr(draw, scope: Scope, depth: int = 2, uniform: bool = False) -> Expr:
    """An int expression; `uniform` keeps thread ids (and variables derived from them) out."""
    ints = [n for n, u in scope.ints if u or not uniform]
    kinds = ["const"] + ([] if uniform else ["tid"]) + (["param"] if scope.params else []) \
        + (["var"] if ints else []) + (["bin", "byconst"] if depth > 0 else [])
    kind = draw(st.sampled_from(kinds))
    if kind == "const":
        return Const(draw(st.integers(0, 8)))
    if kind == "tid":
        return Tid(draw(st.integers(0, 2)))
    if kind == "param":
        return Param(draw(st.sampled_from(scope.params)))
    if kind == "var":
        return Var(draw(st.sampled_from(ints)))
    left = draw_expr(draw, scope, depth - 1, uniform)
    if kind == "bin":
        return Bin(draw(st.sampled_from("+*-")), left, draw_expr(draw, scope, depth - 1, uniform))
    op = draw(st.sampled_from(["/", "%", "&", ">>", "<<"]))
    const = {"/": st.integers(1, 8), "%": st.integers(1, 8), "&": st.integers(0, 31),
             ">>": st.integers(0, 3), "<<": st.integers(0, 3)}[op]
    return ByConst(op, left, draw(const))


def draw_index(draw, scope: Scope, buffer: str) -> Expr:
    """A global index is any expression (the oracle drops kernels indexing below 0); a shared
    index is brought into the array by a mask, or by `%` (the oracle drops negative dividends)."""
    e = draw_expr(draw, scope, depth=3)
    if space_of(buffer) == GLOBAL:
        return e
    size = dict(scope.shared)[buffer]
    return ByConst("%", e, size) if draw(st.booleans()) else ByConst("&", e, size - 1)


def draw_value(draw, scope: Scope, depth: int = 1) -> Value:
    """A stored value: mostly a function of the thread, sometimes a constant (benign same-value
    writes), a load (read-modify-write), a float local, or a sum or product of those."""
    kinds = ["int", "const", "load"] + (["local"] if scope.floats else []) + (["bin"] if depth > 0 else [])
    kind = draw(st.sampled_from(kinds))
    if kind == "int":
        return IntValue(draw_expr(draw, scope))
    if kind == "const":
        return FConst(draw(st.sampled_from([1.0, 0.0, 2.0])))
    if kind == "load":
        buffer = draw_buffer(draw, scope)
        return Load(buffer, draw_index(draw, scope, buffer))
    if kind == "local":
        return FLocal(draw(st.sampled_from(scope.floats)))
    op = draw(st.sampled_from("+*"))
    right = FConst(draw(st.sampled_from([1.0, 2.0]))) if draw(st.booleans()) else draw_value(draw, scope, 0)
    return FBin(op, draw_value(draw, scope, 0), right)


def draw_buffer(draw, scope: Scope) -> str:
    return draw(st.sampled_from(scope.globals + tuple(n for n, _ in scope.shared)))


def draw_loop_bounds(draw, scope: Scope) -> tuple[Expr, Expr, Expr]:
    """(start, bound, step): a counted loop from a small constant or a uniform expression to a
    constant or parametric bound, or a thread-strided loop from a thread-dependent start."""
    start_kind = draw(st.sampled_from(["const", "uniform", "thread"]))
    if start_kind == "const":
        start = Const(draw(st.integers(0, 3)))
    else:
        start = draw_expr(draw, scope, depth=1, uniform=start_kind == "uniform")
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


def draw_stmt(draw, scope: Scope, names: Names) -> tuple[Stmt, Scope]:
    """One statement and the scope after it (a local it declares stays visible)."""
    kinds = ["store", "load", "int"]
    if scope.depth < MAX_DEPTH:
        kinds += ["for", "while", "if"]
    if scope.uniform:
        kinds.append("barrier")    # barriers only where every thread reaches them alike
    kind = draw(st.sampled_from(kinds))
    if kind == "store":
        buffer = draw_buffer(draw, scope)
        return Store(buffer, draw_index(draw, scope, buffer), draw_value(draw, scope)), scope
    if kind == "load":
        buffer, name = draw_buffer(draw, scope), names.fresh("f")
        return LoadLocal(name, buffer, draw_index(draw, scope, buffer)), scope.with_float(name)
    if kind == "int":
        name, e = names.fresh("i"), draw_expr(draw, scope)
        return IntLocal(name, e), scope.with_int(name, is_uniform(e, scope))
    if kind == "barrier":
        return Barrier(draw(st.sampled_from(BARRIER_SPACES))), scope
    if kind == "if":
        cond = Cmp(draw(st.sampled_from(CMP_OPS)), draw_expr(draw, scope, depth=1),
                   draw_expr(draw, scope, depth=0))
        inner = scope.nested(is_uniform(cond.left, scope) and is_uniform(cond.right, scope))
        orelse = draw_block(draw, inner, names, 0, 2)
        return If(cond, draw_block(draw, inner, names, 1, 3), orelse), scope
    var = names.fresh("r" if kind == "for" else "w")
    start, bound, step = draw_loop_bounds(draw, scope)
    uniform = all(is_uniform(e, scope) for e in (start, bound, step))
    body = draw_block(draw, scope.nested(uniform).with_int(var, uniform), names, 1, 3)
    return (For if kind == "for" else While)(var, start, bound, step, body), scope


def draw_block(draw, scope: Scope, names: Names, low: int, high: int) -> tuple:
    n = draw(st.integers(low, high))
    out = []
    for _ in range(n):
        s, scope = draw_stmt(draw, scope, names)
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
    globals_ = tuple(f"g{i}" for i in range(draw(st.integers(1, 2))))
    shared = tuple((f"s{i}", draw(st.sampled_from([16, 8, 32, 64]))) for i in range(draw(st.integers(0, 2))))
    body = draw_block(draw, Scope(params, globals_, shared), Names(), 1, 6)
    values = tuple((p, draw(st.integers(*PARAM_VALUES))) for p in params)
    return Case(Kernel(block, params, globals_, shared, body), values)


# ---------------------------------------------------------------- emitting CUDA, Metal and GLSL


def used_params(kernel: Kernel) -> tuple:
    """The parameters the body mentions: only those are declared (glslang drops an unused push
    constant block, and `--define` of a parameter kernelrace does not see is an error)."""
    seen: set[str] = set()

    def visit(node):
        if isinstance(node, Param):
            seen.add(node.name)
        elif isinstance(node, tuple):
            for x in node:
                visit(x)
        elif hasattr(node, "__dataclass_fields__"):
            for name in node.__dataclass_fields__:
                visit(getattr(node, name))

    visit(kernel.body)
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
    float_suffix = "f"

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
            v = s.var
            self.line(f"for (int {v} = {self.expr(s.start)}; {v} < {self.expr(s.bound)}; {v} += {self.expr(s.step)}) {{",
                      depth, path, loop=True)
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


def c_div(a: int, b: int) -> int:
    """C's division truncates toward zero."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


class ThreadRun:
    """One thread executing the kernel on concrete values, appending its accesses to `out`."""

    def __init__(self, kernel: Kernel, params: dict, thread: tuple, dialect: str, out: list):
        self.kernel, self.thread, self.dialect, self.out = kernel, thread, dialect, out
        self.ints = {p: params.get(p, 0) for p in kernel.params}
        self.floats: dict[str, object] = {}
        self.phases = {SHARED: 0, GLOBAL: 0}
        self.epoch = 0
        self.iters: tuple = ()
        self.steps = 0
        self.seq = 0
        self.sizes = dict(kernel.shared)

    def expr(self, e: Expr) -> int:
        if isinstance(e, Const):
            return e.value
        if isinstance(e, Tid):
            return self.thread[e.dim]
        if isinstance(e, (Param, Var)):
            return self.ints[e.name]
        a = self.expr(e.left)
        if isinstance(e, Bin):
            b = self.expr(e.right)
            return c_int(a + b if e.op == "+" else a - b if e.op == "-" else a * b)
        c = e.const
        if e.op in "/%<<" and a < 0:
            # GLSL's % of a negative dividend is undefined (glslang emits OpSMod, not C's rem), and
            # so is C's << of a negative value.
            raise IllDefined(f"{e.op} of a negative value")
        if e.op == "/":
            return c_div(a, c)
        if e.op == "%":
            return a - c * c_div(a, c)
        if e.op == "<<":
            return c_int(a << c)
        return a >> c if e.op == ">>" else a & c

    def cond(self, c: Cmp) -> bool:
        a, b = self.expr(c.left), self.expr(c.right)
        return {"<": a < b, "<=": a <= b, "==": a == b, "!=": a != b, ">=": a >= b, ">": a > b}[c.op]

    def access(self, path: tuple, buffer: str, index: Expr, value=None, write=False) -> object:
        """Record one access; a read returns its value as a term (see `loaded_term`)."""
        element = self.expr(index)
        if element < 0 or (buffer in self.sizes and element >= self.sizes[buffer]):
            raise IllDefined(f"{buffer}[{element}] out of bounds")
        phase = self.phases[space_of(buffer)]
        self.out.append(Access(self.thread, path, write, buffer, element, value, phase, self.epoch,
                               self.iters, self.seq))
        self.seq += 1
        return ("load", buffer, element, phase)

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
        if self.steps > MAX_STEPS:
            raise IllDefined(f"a thread runs more than {MAX_STEPS} statements")
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
        while self.ints[s.var] < self.expr(s.bound):
            if k == MAX_TRIPS:
                raise IllDefined(f"a loop runs more than {MAX_TRIPS} iterations")
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
    thread reaches each one alike and a barrier interval is a count of barriers."""
    out: list[Access] = []
    epochs = set()
    for t in threads(kernel.block):
        run = ThreadRun(kernel, params, t, dialect, out)
        run.block(kernel.body, ())
        epochs.add(run.epoch)
    assert len(epochs) == 1, "barriers must be uniform"
    written = versions(out)
    return [normalise_loads(a, written) if a.write else a for a in out]


def versions(accesses: list[Access]) -> dict:
    """(buffer, element) -> sorted phases of the writes to it."""
    out: dict = {}
    for a in accesses:
        if a.write:
            out.setdefault((a.buffer, a.element), []).append(a.phase)
    for v in out.values():
        v.sort()
    return out


def normalise_loads(a: Access, writes: dict) -> Access:
    """A loaded value is named by the element and how many writes to it precede its barrier
    interval: two loads of an element nobody wrote in between load the same value."""
    def term(v):
        if not isinstance(v, tuple):
            return v
        if v[0] == "load":
            _, buffer, element, phase = v
            return ("load", buffer, element, bisect.bisect_left(writes.get((buffer, element), []), phase))
        return v[:1] + tuple(sorted((term(x) for x in v[1:]), key=repr))
    return Access(a.thread, a.path, a.write, a.buffer, a.element, term(a.value), a.phase, a.epoch, a.iters, a.seq)


@dataclass(frozen=True)
class Collision:
    """Two accesses by different threads to one element in one barrier interval, one a write."""
    first: Access
    second: Access

    @property
    def harmful(self) -> bool:
        return not (self.first.write and self.second.write and self.first.value == self.second.value)


@dataclass
class OracleVerdict:
    racy: dict                 # buffer -> a harmful collision on it
    benign: dict               # buffer -> a same-value write-write collision (only those on it)
    touched: set               # buffers with any collision
    accesses: list


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
    """The worst collision in one (buffer, element, interval) group: a harmful one if any."""
    writes = [a for a in group if a.write]
    reads = [a for a in group if not a.write]
    pair = other_thread_pair(writes, reads) or differing_writes(writes) or other_thread_pair(writes, writes)
    return Collision(*sorted(pair, key=lambda a: a.seq)) if pair else None


def judge(accesses: list[Access]) -> OracleVerdict:
    groups: dict = {}
    for a in accesses:
        groups.setdefault((a.buffer, a.element, a.phase), []).append(a)
    racy, benign = {}, {}
    for (buffer, _, _), group in sorted(groups.items(), key=lambda kv: kv[0]):
        c = collision(group)
        if c is None:
            continue
        if c.harmful:
            racy.setdefault(buffer, c)
        else:
            benign.setdefault(buffer, c)
    return OracleVerdict(racy, {b: c for b, c in benign.items() if b not in racy}, set(racy) | set(benign),
                         accesses)


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
        self.em, self.block = em, block
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


def analyser_options(kernel_timeout: float) -> Options:
    # Fix hints re-analyse the kernel for every finding: not what is measured here.
    return Options(hints="off", kernel_timeout_s=kernel_timeout)


# ---------------------------------------------------------------- witnesses


def replay(finding, subject: Subject, kernel: Kernel, params: dict, dialect: str) -> tuple[str, str]:
    """("ok" | "bad" | "inconclusive", why): does the witness's pair of accesses happen in the
    oracle, run on the witness's parameter values: each thread performs its access (statement,
    kind, element, the witness's iterations) and the two share a barrier interval."""
    w = finding.witness
    values = dict(params)
    values.update({k: v for k, v in (w.get("params") or {}).items() if k in kernel.params})
    try:
        accesses = run_oracle(kernel, values, dialect)
    except IllDefined as exc:
        return "inconclusive", f"the oracle cannot run the witness's parameters {values}: {exc}"
    sides = []
    for side, loc in (("first", finding.first), ("second", finding.second)):
        found, why = witness_accesses(accesses, side, loc, w, subject, finding.second.buffer)
        if not found:
            return "bad", why
        sides.append(found)
    if not any(a.phase == b.phase for a in sides[0] for b in sides[1]):
        return "bad", "the two accesses are in different barrier intervals"
    return "ok", ""


def witness_accesses(accesses: list[Access], side: str, loc, w: dict, subject: Subject, buffer: str):
    """The oracle's accesses matching one side of a witness, or ([], why not)."""
    thread = tuple(w[f"{side}_thread"])
    line = subject.location_line(loc)
    path = subject.em.lines.get(line)
    # Iterations are keyed by the loop's line (SPIR-V: of its OpLoopMerge); a loop not mapped
    # back to one of ours constrains nothing.
    by_line = {subject.source_line(int(key)): k for key, k in (w.get(f"{side}_iterations") or {}).items()}
    iters = {subject.em.loops[n]: k for n, k in by_line.items() if n in subject.em.loops}
    write = loc.kind == "write"
    found = [a for a in accesses
             if a.thread == thread and a.buffer == buffer and a.element == w["element"] and a.write == write
             and (path is None or a.path == path) and all(dict(a.iters).get(p) == k for p, k in iters.items())]
    if found:
        return found, ""
    where = f" at line {line}" if line is not None else ""
    its = f" in iterations {{{', '.join(f'line {n}: {k}' for n, k in by_line.items())}}}" if by_line else ""
    return [], f"thread {thread} does not {loc.kind} {buffer}[{w['element']}]{where}{its}"


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
    unknown: list = field(default_factory=list)          # racy buffers with only an `unknown` finding
    missed: list = field(default_factory=list)           # racy buffers without a finding
    false_alarms: list = field(default_factory=list)     # findings where the oracle sees no collision
    benign_reported: list = field(default_factory=list)  # findings on buffers with same-value races only
    unknown_findings: int = 0
    bad_witnesses: list = field(default_factory=list)
    inconclusive_witnesses: list = field(default_factory=list)
    seconds: float = 0.0


@dataclass(frozen=True)
class Failure:
    kind: str                  # missed | witness | rejected | crashed | timeout
    dialect: str
    mode: str
    what: str                  # memory space (missed), rule (witness), the message's shape
    detail: str

    @property
    def signature(self) -> tuple:
        return self.kind, self.dialect, self.mode, self.what


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
        result.status, result.message = "rejected", str(exc)
    except HardTimeout as exc:
        result.status, result.message = "timeout", str(exc)
    except Exception as exc:  # a crash of the code under test is a finding of this harness
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
    result.unknown_findings = sum(f.rule == "unknown" for f in findings)
    for f in findings:
        if result.mode == "define" and (f.rule in RACE_RULES or f.rule == "divergent-barrier"):
            # Every generated barrier is uniform: a divergent-barrier finding is a false alarm too.
            if f.second.buffer not in verdict.touched:
                result.false_alarms.append(f"{f.rule} on {f.second.buffer}")
            elif f.second.buffer in verdict.benign:
                result.benign_reported.append(f"{f.rule} on {f.second.buffer}")
        if f.rule in RACE_RULES and f.witness:
            status, why = replay(f, subject, case.kernel, case.params, result.dialect)
            if status != "ok":
                text = f"{f.rule} on {f.second.buffer} (line {subject.location_line(f.second)}): {why}; witness {f.witness}"
                (result.bad_witnesses if status == "bad" else result.inconclusive_witnesses).append(text)


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


def failures_of(result: ModeResult, case: Case, verdict: OracleVerdict, em: Emitted) -> list[Failure]:
    d, m = result.dialect, result.mode
    out = [Failure(result.status, d, m, shape(result.message), result.message)] if result.status != "checked" else []
    for b in result.missed:
        out.append(Failure("missed", d, m, space_of(b),
                           f"oracle: {describe_collision(verdict.racy[b], case.kernel, em)}; "
                           f"kernelrace: {result.verdict}"))
    out += [Failure("witness", d, m, w.split(" ", 1)[0], w) for w in result.bad_witnesses]
    return out


HEADER_LINES = 2    # `// kernelrace-args: ...` and a line saying where the kernel came from


def header(case: Case, dialect: str, mode: str, note: str = "") -> list[str]:
    args = [] if dialect == "glsl" else ["--block-dim", ",".join(map(str, case.kernel.block))]
    if mode == "define":
        used = used_params(case.kernel)
        args += [x for p, v in case.values if p in used for x in ("--define", f"{p}={v}")]
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
        results = [ModeResult(dialect, m, "rejected", str(exc)) for m in modes]
    else:
        # Without parameters both modes are the same run.
        for m in modes:
            r = check_mode(subject, case, verdict, m, kernel_timeout) \
                if m == modes[0] or used_params(case.kernel) else _same_as(results[0], m)
            results.append(r)
    failures = [f for r in results for f in failures_of(r, case, verdict, em)]
    return DialectRun(sorted(verdict.racy), sorted(verdict.benign), results, failures, time.perf_counter() - t0)


def _same_as(result: ModeResult, mode: str) -> ModeResult:
    return ModeResult(**{**result.__dict__, "mode": mode,
                         "false_alarms": [], "benign_reported": []})


# ---------------------------------------------------------------- evaluating one kernel


@dataclass
class KernelRecord:
    chunk: int
    chunk_size: int            # the chunk's max_examples (hypothesis draws differently for another)
    call: int                  # which call of its chunk's hypothesis run drew it
    runs: dict                 # dialect -> DialectRun
    case: Case | None = None   # kept when it failed: to save it and shrink it

    @property
    def failures(self) -> list[Failure]:
        return [f for r in self.runs.values() for f in r.failures]


def verdicts(case: Case, dialects) -> dict | None:
    """The oracle's verdict per dialect (barrier scopes differ), or None when the kernel is not
    well defined for the case's parameter values."""
    try:
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
            rec = KernelRecord(chunk, count, calls, evaluate(case, v, Path(tmp), kernel_timeout))
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


def shrink_failure(seed: int, record: KernelRecord, failure: Failure, kernel_timeout: float,
                   budget_s: float) -> Case:
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
        with tempfile.TemporaryDirectory(prefix="kernelrace-differential-") as tmp:
            run = check_dialect(case, failure.dialect, v[failure.dialect], Path(tmp), kernel_timeout,
                                (failure.mode,))
        if any(f.signature == failure.signature for f in run.failures):
            best = case
            raise Reproduced
        if calls == record.call:
            state = "done"     # the failure did not show again (a timeout does not always)

    with contextlib.suppress(Exception):
        run_hypothesis(chunk_seed(seed, record.chunk), record.chunk_size, body, shrink=True)
    return best or record.case


# ---------------------------------------------------------------- the campaign

COLUMNS = ("racy buffers", "found", "unknown", "missed", "false alarms", "benign reported",
           "bad witnesses", "inconclusive witnesses", "rejected", "crashed", "timeout")


@dataclass
class Campaign:
    seed: int
    dialects: tuple
    kernels: int = 0
    ill_defined: int = 0
    seconds: float = 0.0
    racy: Counter = field(default_factory=Counter)          # dialect -> kernels with a harmful race
    benign_only: Counter = field(default_factory=Counter)   # dialect -> kernels with only benign races
    counts: dict = field(default_factory=dict)              # (dialect, mode) -> Counter over COLUMNS
    dialect_seconds: Counter = field(default_factory=Counter)
    failing: list = field(default_factory=list)             # KernelRecords with failures

    def add(self, chunk: ChunkResult) -> None:
        self.ill_defined += chunk.ill_defined
        for rec in chunk.records:
            self.kernels += 1
            for d, run in rec.runs.items():
                self.racy[d] += bool(run.racy)
                self.benign_only[d] += not run.racy and bool(run.benign)
                self.dialect_seconds[d] += run.seconds
                for r in run.results:
                    self.count(r, len(run.racy))
            if rec.failures:
                self.failing.append(rec)

    def count(self, r: ModeResult, racy: int) -> None:
        c = self.counts.setdefault((r.dialect, r.mode), Counter())
        c["racy buffers"] += racy
        for column, items in (("found", r.found), ("unknown", r.unknown), ("missed", r.missed),
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
    seed, record, failure, kernel_timeout, budget = args
    case = shrink_failure(seed, record, failure, kernel_timeout, budget)
    again = [f for f in failures_in(case, failure.dialect, failure.mode, kernel_timeout)
             if f.signature == failure.signature]
    return failure.signature, Shrunk(case, again[0] if again else failure)


def pool(jobs: int):
    # A fresh process per task: whatever a kernel leaves behind in z3 or the caches goes with it.
    return multiprocessing.get_context("fork").Pool(jobs, initializer=limit_memory, maxtasksperchild=1)


def run_campaign(kernels: int, seed: int, dialects: tuple, jobs: int, kernel_timeout: float,
                 progress: Callable[[str], None] = lambda s: None) -> Campaign:
    camp = Campaign(seed, dialects)
    sizes = [min(CHUNK, kernels - start) for start in range(0, kernels, CHUNK)]
    tasks = [(seed, i, n, dialects, kernel_timeout) for i, n in enumerate(sizes)]
    t0 = time.perf_counter()
    with pool(jobs) as p:
        for done, chunk in enumerate(p.imap_unordered(_explore, tasks), 1):
            camp.add(chunk)
            progress(f"chunk {done}/{len(tasks)}: {camp.kernels} kernels, {len(camp.failing)} failing, "
                     f"{time.perf_counter() - t0:.0f} s")
    camp.seconds = time.perf_counter() - t0
    return camp


def shrink_all(camp: Campaign, jobs: int, kernel_timeout: float, budget_s: float) -> dict:
    """Signature -> Shrunk: the first failure of each signature, shrunk (a timeout is not: each
    try would cost the whole limit)."""
    tasks = [(camp.seed, pairs[0][0], pairs[0][1], kernel_timeout, budget_s)
             for sig, pairs in camp.signatures().items() if sig[0] != "timeout"]
    if not tasks:
        return {}
    with pool(jobs) as p:
        return dict(p.imap_unordered(_shrink, tasks))


# ---------------------------------------------------------------- fixtures and the report


def expected_rules(verdict: OracleVerdict, em: Emitted, limit: int = 200) -> dict[int, set]:
    """line -> rules the oracle's races call for, named as kernelrace names them: by which access
    a thread would execute first, on the line of the second (barrier-scope when only a barrier
    of another memory space lies between). A guide for a fixture's `// expect:`, to review."""
    lines = {p: n for n, p in em.lines.items()}
    groups: dict = {}
    for a in verdict.accesses:
        groups.setdefault((a.buffer, a.element, a.phase), []).append(a)
    out: dict[int, set] = {}
    harmful = [g for g in groups.values() if (c := collision(g)) is not None and c.harmful]
    for group in harmful[:limit]:
        classes: dict = {}
        for a in group:
            classes.setdefault((a.path, a.write, a.epoch), []).append(a)
        keys = sorted(classes)
        for i, k1 in enumerate(keys):
            for k2 in keys[i:]:
                xs, ys = classes[k1], classes[k2]
                pair = (differing_writes(xs + ys) if k1[1] and k2[1]
                        else other_thread_pair(xs, ys) if k1[1] or k2[1] else None)
                if pair:
                    a, b = sorted(pair, key=lambda x: x.seq)
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
    detail = [f"// {failure.kind} ({failure.dialect}, {failure.mode}): " + failure.detail.replace("\n", " ")]
    return "\n".join(lines + detail) + "\n"


def save_failures(camp: Campaign, shrunk: dict, out: Path) -> list[Path]:
    """Each failing kernel as a fixture (`// kernelrace-args:` first, the oracle's expectations on
    their lines, what failed at the end), and the shrunk kernel of each signature beside it."""
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for sig, pairs in camp.signatures().items():
        slug = re.sub(r"\W+", "_", "-".join(sig[:3]) + "-" + sig[3])[:60].strip("_")
        for rec, f in pairs:
            where = f"s{camp.seed}-c{rec.chunk}-n{rec.call}"
            path = out / f"{slug}-{where}{SUFFIX[f.dialect]}"
            path.write_text(fixture_text(rec.case, f, f"seed {camp.seed}, chunk {rec.chunk}, kernel {rec.call}"))
            written.append(path)
        if sig in shrunk:
            rec, f = pairs[0]
            path = out / f"{slug}-min-s{camp.seed}-c{rec.chunk}-n{rec.call}{SUFFIX[f.dialect]}"
            path.write_text(fixture_text(shrunk[sig].case, shrunk[sig].failure,
                                         f"shrunk from seed {camp.seed}, chunk {rec.chunk}, kernel {rec.call}"))
            written.append(path)
    return written


def report(camp: Campaign, shrunk: dict) -> str:
    out = [f"kernels: {camp.kernels} (seed {camp.seed}; {camp.ill_defined} ill-defined draws regenerated)",
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
    per = ", ".join(f"{d} {camp.dialect_seconds[d] / max(camp.kernels, 1):.2f} s" for d in camp.dialects)
    out.append(f"time: {camp.seconds:.0f} s; per kernel and dialect (both modes, oracle included): {per}")
    sigs = camp.signatures()
    out.append(f"distinct failures: {len(sigs)}")
    for sig, pairs in sigs.items():
        rec, f = pairs[0]
        out.append(f"- {' '.join(sig[:3])} [{sig[3]}]: {len({(r.chunk, r.call) for r, _ in pairs})} kernel(s), "
                   f"first at chunk {rec.chunk} kernel {rec.call}")
        case, f = (shrunk[sig].case, shrunk[sig].failure) if sig in shrunk else (rec.case, f)
        out.append(f"    {'shrunk: ' if sig in shrunk else ''}{f.detail}")
        out += ["    | " + ln for ln in emit(case.kernel, f.dialect, header(case, f.dialect, f.mode)).text.splitlines()]
    return "\n".join(out)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--kernels", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--dialects", default=",".join(DIALECTS))
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--kernel-timeout", type=float, default=KERNEL_TIMEOUT_S,
                    help="kernelrace's --kernel-timeout per kernel (a call is cut off at three times this)")
    ap.add_argument("--shrink-seconds", type=float, default=60.0,
                    help="time to shrink the first kernel of each distinct failure (0: do not shrink)")
    ap.add_argument("--save-failures", type=Path, metavar="DIR")
    args = ap.parse_args(argv)
    dialects = tuple(d for d in args.dialects.split(",") if d)
    unknown = set(dialects) - set(DIALECTS)
    if unknown:
        ap.error(f"unknown dialect(s) {', '.join(sorted(unknown))} (choose from {', '.join(DIALECTS)})")
    camp = run_campaign(args.kernels, args.seed, dialects, args.jobs, args.kernel_timeout,
                        progress=lambda s: print(s, file=sys.stderr, flush=True))
    shrunk = shrink_all(camp, args.jobs, args.kernel_timeout, args.shrink_seconds) if args.shrink_seconds > 0 else {}
    print(report(camp, shrunk))
    if args.save_failures:
        written = save_failures(camp, shrunk, args.save_failures)
        print(f"{len(written)} fixture(s) written to {args.save_failures}")
    return 1 if camp.failing else 0


if __name__ == "__main__":
    sys.exit(main())
