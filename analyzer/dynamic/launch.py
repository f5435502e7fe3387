"""The concrete launch a run uses: scalar parameters from --scalar, then what the host code
computes from them (TVM's `cse_v` bindings), then a witness's values, and the block extents the
kernel or the command line fixes."""

from __future__ import annotations

from analyzer import ir
from analyzer.dynamic.interpreter import DIMS, Interpreter, Launch, Thread
from analyzer.dynamic.values import InterpretError


def make_launch(kernel: ir.Kernel, defines: dict[str, int] | None = None, witness: dict | None = None,
                seed: int = 0, blocks: list[tuple[int, int, int]] | None = None,
                default: int | None = None, contracts: list[str] = ()) -> Launch:
    """`default`: the value of a parameter nothing else gives (an oracle's small extent); without
    it such a parameter is an error naming the --scalar to give."""
    params = {**((witness or {}).get("params") or {}), **kernel.bindings, **(defines or {})}
    params = {k: int(v) for k, v in params.items() if isinstance(v, (int, bool))}
    _derive(kernel, params)
    if default is not None:
        params.update({p: default for p in kernel.params if p not in params})
        _derive(kernel, params)
    missing = [p for p in kernel.params if p not in params]
    if missing:
        raise InterpretError(f"no value for the parameter{'s' if len(missing) > 1 else ''} {', '.join(missing)}: "
                             f"give {'them' if len(missing) > 1 else 'it'} with --scalar "
                             + " ".join(f"{p}=N" for p in missing))
    block_dim = {}
    for d in DIMS:
        v = kernel.block_dim.get(d)
        if v is None:
            raise InterpretError(f"the block extent {d} is symbolic: give --block-dim")
        block_dim[d] = v
    grid_dim = {}
    used = blocks or [(0, 0, 0)]
    for k, d in enumerate(DIMS):
        v = kernel.grid_dim.get(d)
        if v is None and d in kernel.grid_params:
            v = params.get(kernel.grid_params[d])
        grid_dim[d] = v if isinstance(v, int) and v > 0 else max(b[k] for b in used) + 1
    shaped = {}
    for text in contracts:   # "[kernel/]buffer:property", those in force on this kernel
        scope, _, rest = text.rpartition("/")
        buf, _, prop = rest.partition(":")
        if not scope or scope == kernel.name:
            shaped[buf] = prop
    return Launch(params, block_dim, grid_dim, seed, kernel.warp_size or 32, shaped)


def _derive(kernel: ir.Kernel, params: dict[str, int]) -> None:
    """Parameters the host computes from others (`cse_v11 = (n + 511) // 512`), where their inputs
    are known; a host loop variable (`i@1`) stays unknown unless defined."""
    probe = Interpreter(kernel, Launch(params, {"x": 1, "y": 1, "z": 1}, {"x": 1, "y": 1, "z": 1}))
    dummy = Thread(0, {"x": 0, "y": 0, "z": 0}, {"x": 0, "y": 0, "z": 0}, 0)
    span = ir.Span(kernel.file, 0, 0)
    marker = ir.Eval(ir.Const(0), span)
    for _ in range(len(kernel.definitions) + 1):
        changed = False
        for name, expr in kernel.definitions.items():
            if name in params:
                continue
            try:
                v = probe._eval(expr, dummy, marker)
            except (InterpretError, KeyError, ZeroDivisionError):
                continue
            if isinstance(v, int):
                params[name] = v
                changed = True
        if not changed:
            return
