"""IR expressions turned into Python closures once per statement, so that a thousand threads
running a loop do not walk the expression trees a million times. Each closure takes the thread and
returns the value `Interpreter._eval_tree` would; anything unusual falls back to it."""

from __future__ import annotations

import numpy as np

from analyzer import ir
from analyzer.dynamic.calls import call
from analyzer.dynamic.values import InterpretError, is_float


def _trunc(a, b):
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def compile_expr(interp, e, s):
    """A closure thread -> value for expression `e` of statement `s`."""
    if isinstance(e, ir.Const):
        v = e.value
        return lambda t: v
    if isinstance(e, ir.Var):
        name = e.name
        return lambda t: t.env[name] if name in t.env else interp._eval_tree(e, t, s)
    if isinstance(e, ir.Param):
        if e.name in interp.launch.params:
            v = interp.launch.params[e.name]
            return lambda t: v
        return lambda t: interp._eval_tree(e, t, s)
    if isinstance(e, ir.Builtin):
        if e.name.startswith("tid."):
            d = e.name[4:]
            return lambda t: t.tid[d]
        if e.name.startswith("bid."):
            d = e.name[4:]
            return lambda t: t.bid[d]
        return lambda t: interp._eval_tree(e, t, s)
    if isinstance(e, ir.BinOp) and e.op not in ("&&", "||"):
        fa, fb = compile_expr(interp, e.a, s), compile_expr(interp, e.b, s)
        op = e.op
        if op in ("+", "-", "*"):
            py = {"+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b}[op]

            def arith(t):
                a, b = fa(t), fb(t)
                if type(a) is int and type(b) is int:
                    return py(a, b)
                return interp._binop_values(op, a, b, s)
            return arith
        if op in ("/", "%"):
            def div(t):
                a, b = fa(t), fb(t)
                if type(a) is int and type(b) is int and b != 0:
                    q = _trunc(a, b)
                    return q if op == "/" else a - b * q
                return interp._binop_values(op, a, b, s)
            return div
        if op in ("<", "<=", ">", ">=", "==", "!="):
            cmp = {"<": lambda a, b: a < b, "<=": lambda a, b: a <= b, ">": lambda a, b: a > b,
                   ">=": lambda a, b: a >= b, "==": lambda a, b: a == b, "!=": lambda a, b: a != b}[op]

            def compare(t):
                a, b = fa(t), fb(t)
                if isinstance(a, tuple) or isinstance(b, tuple):
                    return interp._binop_values(op, a, b, s)
                return int(bool(cmp(a, b)))
            return compare
        return lambda t: interp._binop_values(op, fa(t), fb(t), s)
    if isinstance(e, ir.Select):
        fc, fa, fb = (compile_expr(interp, x, s) for x in (e.cond, e.a, e.b))
        return lambda t: fa(t) if _truth(fc(t), s) else fb(t)
    if isinstance(e, ir.Call) and not e.fn.startswith("ptr:"):
        args = [compile_expr(interp, a, s) for a in e.args]
        fn, lang = e.fn, interp.kernel.lang
        if fn in ("f+", "f-", "f*", "f/") and len(args) == 2:
            fa, fb = args
            op = fn[1]

            def farith(t):
                a, b = fa(t), fb(t)
                if isinstance(a, np.floating) and type(a) is type(b):
                    return a + b if op == "+" else a - b if op == "-" else a * b if op == "*" else a / b
                return interp._call(fn, (a, b), s)
            return farith
        if fn.startswith("lane") and fn[4:].isdigit() and len(args) == 1:
            (fa,) = args
            i = int(fn[4:])

            def lane(t):
                v = fa(t)
                if isinstance(v, tuple) and i < len(v):
                    return v[i]
                return interp._call(fn, (v,), s)
            return lane
        if fn.startswith("float:"):
            try:
                v = call(fn, (), lang)
            except InterpretError:
                return lambda t: interp._call(fn, (), s)
            return lambda t: v
        if fn == "vec":
            return lambda t: tuple(a(t) for a in args)
        return lambda t: interp._call(fn, tuple(a(t) for a in args), s)
    if isinstance(e, ir.Read):
        acc = e.access
        foff = compile_expr(interp, acc.offset, s)
        return lambda t: interp._read(acc, _index(foff(t), s, interp), t, s)
    return lambda t: interp._eval_tree(e, t, s)


def _index(v, s, interp):
    if type(v) is int:
        return v
    if isinstance(v, tuple) or is_float(v):
        interp._not_integer(s)
    return int(v)


def _truth(v, s) -> bool:
    if isinstance(v, tuple):
        raise InterpretError("a vector used as a condition")
    return bool(v)
