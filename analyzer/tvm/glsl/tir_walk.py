"""Generic walks over TIR expressions: operands, whether loads occur, whether evaluation order needs care.

Separate from the expression translator: these read TIR only and write no GLSL, and the
expression and statement translators both decide with them what to hoist.
"""

from __future__ import annotations

# Expression node kinds (type(node).__name__) and their operands, for the generic walks.
_BINARY = {"Add": "+", "Sub": "-", "Mul": "*", "Div": "/", "Mod": "%", "FloorDiv": None,
           "FloorMod": None, "Min": None, "Max": None, "EQ": "==", "NE": "!=", "LT": "<",
           "LE": "<=", "GT": ">", "GE": ">=", "And": "&&", "Or": "||"}
_LOAD_KINDS = ("TensorLoad", "BufferLoad")


def _op_name(call) -> str:
    op = getattr(call, "op", None)
    return str(getattr(op, "name", op))


def _short(name: str) -> str:
    return name.rsplit(".", 1)[-1]


def _children(e) -> list:
    """Sub-expressions of a TIR expression, in evaluation order."""
    kind = type(e).__name__
    if kind in _BINARY or kind in ("BitwiseAnd", "BitwiseOr", "BitwiseXor", "LShift", "RShift"):
        return [e.a, e.b]
    if kind == "Not":
        return [e.a]
    if kind in ("Cast", "Broadcast"):
        return [e.value]
    if kind == "Select":
        return [e.condition, e.true_value, e.false_value]
    if kind == "Ramp":
        return [e.base, e.stride]
    if kind == "Let":
        return [e.value, e.body]
    if kind == "Call":
        return [a for a in e.args if type(a).__name__ not in ("StringImm", "String", "str")]
    if kind in _LOAD_KINDS:
        return list(e.indices)
    if kind == "Shuffle":
        return list(e.vectors)
    if kind == "BitwiseNot":
        return [e.a]
    return []


def _has_load(e, memo: dict) -> bool:
    key = e.__chandle__() if hasattr(e, "__chandle__") else id(e)
    if key in memo:
        return memo[key]
    found = type(e).__name__ in _LOAD_KINDS or any(_has_load(c, memo) for c in _children(e))
    memo[key] = found
    return found


def _needs_ordering(e, memo: dict) -> bool:
    """True when evaluating `e` as one GLSL expression would change which loads run, or their order:
    a load behind GLSL's lazy `?:`, `&&`, `||` that TIR evaluates eagerly, a `Let`, or a guarded
    `if_then_else` branch (emitted as an `if` before the expression)."""
    kind = type(e).__name__
    if kind == "Call" and _short(_op_name(e)) == "if_then_else":
        if _has_load(e.args[1], memo) or _has_load(e.args[2], memo):
            return True
    elif kind == "Select":
        if _has_load(e.true_value, memo) or _has_load(e.false_value, memo):
            return True
    elif kind in ("And", "Or"):
        if _has_load(e.b, memo):
            return True
    elif kind == "Let":
        return True
    return any(_needs_ordering(c, memo) for c in _children(e))

