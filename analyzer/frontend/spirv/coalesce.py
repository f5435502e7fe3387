"""Adjacent lane accesses of a lowered body joined into one vector access. Separate: a pass over
the lowered IR, run once a kernel's body is complete."""

from __future__ import annotations

from analyzer import ir


# GLSL has no vector view of a scalar array, so a vector load or store becomes one access per lane
# (`Q_smem[i] = v.x; Q_smem[i + 1] = v.y; ...`). Adjacent lanes with nothing in between are one
# access again: the same bytes, the same program point, a quarter of the pairs to check.
MAX_VECTOR_BYTES = 16


def _split_const(e: ir.Expr) -> tuple[ir.Expr | None, int]:
    """`e` as (base, constant): (x + 2) * 2 -> (x * 2, 4)."""
    if isinstance(e, ir.Const):
        return None, e.value
    if isinstance(e, ir.BinOp) and e.op in ("+", "-") and isinstance(e.b, ir.Const):
        inner, c = _split_const(e.a)
        return inner, c + (e.b.value if e.op == "+" else -e.b.value)
    if isinstance(e, ir.BinOp) and e.op == "*" and isinstance(e.b, ir.Const):
        inner, c = _split_const(e.a)
        return (ir.BinOp("*", inner, e.b) if inner is not None else None), c * e.b.value
    return e, 0


def _lane_access(s) -> ir.Access | None:
    if isinstance(s, ir.MemOp) and s.access.is_write and not s.access.atomic:
        return s.access
    if isinstance(s, ir.Assign) and isinstance(s.value, ir.Read) and not s.value.access.atomic:
        return s.value.access
    return None


def _coalesce(stmts: list, fresh) -> list:
    out: list = []
    i = 0
    while i < len(stmts):
        s = stmts[i]
        if isinstance(s, ir.If):
            s.then, s.orelse = _coalesce(s.then, fresh), _coalesce(s.orelse, fresh)
        elif isinstance(s, ir.Loop):
            s.body, s.update = _coalesce(s.body, fresh), _coalesce(s.update, fresh)
        acc = _lane_access(s)
        run = [s]
        if acc is not None:
            base, c = _split_const(acc.offset)
            j = i + 1
            while j < len(stmts) and (len(run) + 1) * acc.width <= MAX_VECTOR_BYTES:
                nxt = _lane_access(stmts[j])
                if nxt is None or type(stmts[j]) is not type(s) or nxt.buffer != acc.buffer \
                        or nxt.width != acc.width or _split_const(nxt.offset) != (base, c + len(run) * acc.width):
                    break
                run.append(stmts[j])
                j += 1
        if len(run) < 2:
            out.append(s)
            i += 1
            continue
        lanes = [_lane_access(x) for x in run]
        wide = ir.Access(acc.buffer, acc.space, acc.offset, acc.width * len(run), acc.is_write, acc.span,
                         elem_size=acc.elem_size, id=acc.id)
        if isinstance(s, ir.MemOp):
            wide.value = ir.Call("vec", tuple(a.value for a in lanes))
            out.append(ir.MemOp(wide))
        else:
            tmp = fresh(f"{acc.buffer}.vec")
            out.append(ir.Assign(tmp, ir.Read(wide), s.span))
            out.extend(ir.Assign(x.target, ir.Call(f"lane{k}", (ir.Var(tmp),)), x.span) for k, x in enumerate(run))
        i += len(run)
    return out
