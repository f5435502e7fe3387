"""The kernel launches a TVM build's host code makes, for running its device kernels outside TVM.

TVM's Python wheel has no OpenCL runtime, so `kernelrace confirm --runtime opencl` plays the host
part itself: it walks the lowered host TIR (after the host/device split) with concrete values for
the builder's symbolic shapes, in program order, and records every `call_ffi_kernel` with the
arguments and launch extents it passes and the buffers the host allocates on the way. Only what the
launches need is evaluated: integer `let`s, loops, branches on known values; argument checks
(`assert`, the packed-argument unpacking) are skipped.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from analyzer.errors import KernelraceError

MAX_LAUNCHES = 10_000   # a host loop over a large extent: the shape asked for is too big to run


@dataclass
class Storage:
    name: str
    dtype: str                      # TVM's dtype: float32, int32, ...
    shape: tuple[int, ...]
    param: bool                     # a parameter of the builder's function (inputs and outputs)

    @property
    def size(self) -> int:
        n = 1
        for d in self.shape:
            n *= d
        return n


@dataclass
class Launch:
    kernel: str
    args: list[Any]                 # per kernel parameter: a Storage name (str) or an int
    grid: tuple[int, int, int]
    block: tuple[int, int, int]


class Unknown(Exception):
    """A value the host computes from something not given (a shape variable without a value)."""

    def __init__(self, name: str):
        super().__init__(name)
        self.name = name


def param_buffers(mod) -> list[tuple[str, str, tuple]]:
    """The builder's buffer parameters before lowering, as (name, dtype, shape): an extent is an int,
    or its TIR expression (`batch_size + 1`)."""
    import tvm

    out = []
    for _, func in mod.functions.items():
        if not hasattr(func, "params"):
            continue
        for p in func.params:
            shape = getattr(p, "shape", None)
            if shape is None:
                continue
            dims = tuple(int(d.value) if isinstance(d, tvm.tirx.IntImm) else d for d in shape)
            out.append((p.name, str(p.dtype), dims))
    return out


def missing_shapes(mod, values: dict[str, int]) -> list[str]:
    """The variables in the extents of the builder's buffers that `values` does not give, in order."""
    out: list[str] = []
    env = dict(values)
    for _, _, dims in param_buffers(mod):
        for d in dims:
            while not isinstance(d, int):
                try:
                    _eval(d, env)
                    break
                except Unknown as exc:
                    out.append(exc.name)
                    env[exc.name] = 1
    return out


def launches(mod, host, values: dict[str, int]) -> tuple[list[Launch], dict[str, Storage]]:
    """The launches of the host code in order, and every buffer they use (the builder's parameters,
    shaped by `values`, and what the host allocates). Raises KernelraceError naming a value the
    host needs and nobody gave."""
    storages: dict[str, Storage] = {}
    out: list[Launch] = []
    env = dict(values)
    try:
        for name, dtype, dims in param_buffers(mod):
            shape = tuple(d if isinstance(d, int) else _eval(d, values) for d in dims)
            storages[name] = Storage(name, dtype, shape, True)
        for _, func in host.functions.items():
            body = getattr(func, "body", None)
            if body is not None:
                _run(body, env, storages, out)
    except Unknown as exc:
        raise KernelraceError(f"the host code needs a value for `{exc.name}` to launch its kernels: give it "
                              f"with --scalar {exc.name}=INT") from None
    return out, storages


def _run(n, env: dict, storages: dict, out: list) -> None:
    kind = type(n).__name__
    if kind == "SeqStmt":
        for c in n.seq:
            _run(c, env, storages, out)
    elif kind in ("LetStmt", "Bind"):
        try:
            env[n.var.name] = _eval(n.value, env)
        except Unknown:
            pass                                # not needed unless a launch uses it (then it says)
        except (TypeError, AttributeError, ValueError, ZeroDivisionError):
            pass                                # a handle or a struct field: not an integer
        if getattr(n, "body", None) is not None:
            _run(n.body, env, storages, out)
    elif kind == "For":
        lo, extent = _eval(n.min, env), _eval(n.extent, env)
        for i in range(lo, lo + extent):
            _run(n.body, {**env, n.loop_var.name: i}, storages, out)
    elif kind == "IfThenElse":
        try:
            cond = _eval(n.condition, env)
        except (Unknown, TypeError, AttributeError, ValueError):
            if _launches_in(n):
                raise KernelraceError("the host code launches a kernel under a condition kernelrace cannot "
                                      f"evaluate: {n.condition}") from None
            return                              # argument checks
        branch = n.then_case if cond else n.else_case
        if branch is not None:
            _run(branch, env, storages, out)
    elif kind == "AllocBuffer":
        b = n.buffer
        shape = tuple(_eval(d, env) for d in b.shape)
        storages[b.data.args[0].name] = Storage(b.data.args[0].name, str(b.dtype), shape, False)
    elif kind == "Evaluate":
        call = n.value
        if getattr(getattr(call, "op", None), "name", "") == "tirx.call_ffi_kernel":
            out.append(_launch(call, env, storages))
            if len(out) > MAX_LAUNCHES:
                raise KernelraceError(f"the host code launches more than {MAX_LAUNCHES} kernels: use a smaller "
                                      f"--scalar")
    else:
        body = getattr(n, "body", None)          # attributes, buffer declarations
        if body is not None and hasattr(body, "span"):
            _run(body, env, storages, out)


def _launches_in(n) -> bool:
    return "call_ffi_kernel" in str(n)


def _launch(call, env: dict, storages: dict) -> Launch:
    """One `call_ffi_kernel`: the kernel's arguments, then one extent per launch parameter."""
    name = str(call.args[0].value)
    tags = [str(t) for t in call.attrs.launch_params]
    rest = list(call.args)[1:]
    args, extents = rest[:len(rest) - len(tags)], rest[len(rest) - len(tags):]
    values: list[Any] = []
    for a in args:
        if type(a).__name__ == "Call" and str(a.op.name) == "tirx.buffer_data":
            buf = a.args[0].name
            if buf not in storages:
                raise KernelraceError(f"the host code passes buffer `{buf}` to {name}, which it never allocates")
            values.append(buf)
        else:
            values.append(_eval(a, env))
    grid, block = [1, 1, 1], [1, 1, 1]
    for tag, e in zip(tags, extents):
        scope, _, dim = tag.partition(".")
        (grid if scope == "blockIdx" else block)["xyz".index(dim)] = _eval(e, env)
    return Launch(name, values, tuple(grid), tuple(block))


_BINOPS = {
    "Add": lambda a, b: a + b, "Sub": lambda a, b: a - b, "Mul": lambda a, b: a * b,
    "FloorDiv": lambda a, b: a // b, "FloorMod": lambda a, b: a % b,
    "Div": lambda a, b: int(a / b) if isinstance(a, int) else a / b,           # C's truncation
    "Mod": lambda a, b: a - int(a / b) * b,
    "Min": min, "Max": max,
    "LT": lambda a, b: int(a < b), "LE": lambda a, b: int(a <= b), "GT": lambda a, b: int(a > b),
    "GE": lambda a, b: int(a >= b), "EQ": lambda a, b: int(a == b), "NE": lambda a, b: int(a != b),
    "RShift": lambda a, b: a >> b, "LShift": lambda a, b: a << b,
    "And": lambda a, b: int(bool(a) and bool(b)), "Or": lambda a, b: int(bool(a) or bool(b)),
}


def _eval(e, env: dict) -> int:
    """An integer TIR expression over the host's known values."""
    import tvm

    kind = type(e).__name__
    if isinstance(e, tvm.tirx.IntImm):
        return int(e.value)
    if kind in ("Var", "SizeVar"):
        if e.name not in env:
            raise Unknown(e.name)
        return env[e.name]
    if kind in _BINOPS:
        return _BINOPS[kind](_eval(e.a, env), _eval(e.b, env))
    if kind == "Not":
        return int(not _eval(e.a, env))
    if kind == "Cast":
        return _eval(e.value, env)
    if kind == "Select":
        return _eval(e.true_value, env) if _eval(e.condition, env) else _eval(e.false_value, env)
    if kind == "Call":
        op = str(e.op.name)
        if op in ("tirx.shift_right", "tirx.shift_left"):
            a, b = _eval(e.args[0], env), _eval(e.args[1], env)
            return a >> b if op.endswith("right") else a << b
        if op == "tirx.if_then_else":
            return _eval(e.args[1], env) if _eval(e.args[0], env) else _eval(e.args[2], env)
    raise TypeError(f"not an integer expression: {kind}")
