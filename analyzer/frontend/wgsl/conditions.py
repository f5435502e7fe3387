"""WESL's conditional translation: `@if(EXPR)`, `@elif(EXPR)` and `@else` on a declaration, a
struct member or a statement keep it or drop it as the features (`-D NAME`, true unless its value is
`0` or `false`; a feature not given is false) decide, as a WESL linker does before WGSL sees it.

Done on the text, lines and columns kept: a dropped item becomes spaces, a kept one loses only its
attribute. An item runs from the attribute to the `;` or `,` that ends it at its own nesting depth,
or to the `}` that closes its first brace block (an `if` with an `else` goes on to the `else`'s),
or to the `}` of the block around it.
"""

from __future__ import annotations

import re

from analyzer.errors import KernelraceError

_ATTR = re.compile(r"@(if|elif|else)\b")
# Operators, literals (a feature's -D value lands here as a number once the preprocessor has run),
# feature names.
_COND_TOKEN = re.compile(r"\s*(?:(&&|\|\||!|\(|\))|(true|false|[0-9]+[iu]?)\b|([A-Za-z_]\w*))")


def has_conditions(text: str) -> bool:
    return "@" in text and _ATTR.search(text) is not None


def apply_conditions(text: str, filename: str, macros: tuple[tuple[str, str], ...]) -> str:
    """The text with each conditional item kept or blanked."""
    features = {name: str(value).strip().lower() not in ("0", "false") for name, value in macros}
    out = list(text)
    pos = 0
    taken_in_chain: bool | None = None   # None: no chain open; else whether an arm was kept
    while True:
        m = _ATTR.search(text, pos)
        if m is None:
            break
        line_start = text.rfind("\n", 0, m.start()) + 1
        if "//" in text[line_start:m.start()]:       # inside a line comment
            pos = m.end()
            continue
        kind = m.group(1)
        end_attr = m.end()
        cond = True
        if kind in ("if", "elif"):
            open_ = _skip_space(text, end_attr)
            if open_ >= len(text) or text[open_] != "(":
                raise _error(text, filename, m.start(), f"@{kind} without a condition")
            close = _matching(text, open_, filename)
            cond = _evaluate(text[open_ + 1:close], features, text, filename, m.start())
            end_attr = close + 1
        if kind == "if":
            keep = cond
            taken_in_chain = keep
        elif taken_in_chain is None:
            raise _error(text, filename, m.start(), f"@{kind} without an @if before it")
        else:
            keep = not taken_in_chain and cond
            taken_in_chain = taken_in_chain or keep
        item_end = _item_end(text, end_attr)
        _blank(out, m.start(), end_attr if keep else item_end)
        body = _skip_space(text, end_attr)
        if keep and body < len(text) and text[body] == "{" and text[item_end - 1] == "}" \
                and _brace_depth(text, m.start()) == 0:
            # `@if(X) { declarations }` at module scope: the declarations, without the braces.
            _blank(out, body, body + 1)
            _blank(out, item_end - 1, item_end)
        # A chain goes on only when the next attribute is an @elif or @else.
        nxt = _ATTR.search(text, item_end)
        if nxt is None or nxt.group(1) == "if" or text[item_end:nxt.start()].strip():
            taken_in_chain = None
        pos = end_attr if keep else item_end
    return "".join(out)


def _brace_depth(text: str, at: int) -> int:
    """How many braces are open at `at` (comments skipped)."""
    code = re.sub(r"//[^\n]*|/\*.*?\*/", "", text[:at], flags=re.S)
    return code.count("{") - code.count("}")


def _blank(out: list[str], start: int, end: int) -> None:
    for i in range(start, end):
        if out[i] != "\n":
            out[i] = " "


def _skip_space(text: str, i: int) -> int:
    while i < len(text) and text[i] in " \t\r\n":
        i += 1
    return i


def _matching(text: str, open_: int, filename: str) -> int:
    depth = 0
    for i in range(open_, len(text)):
        if text[i] == "(":
            depth += 1
        elif text[i] == ")":
            depth -= 1
            if depth == 0:
                return i
    raise _error(text, filename, open_, "unbalanced parentheses in a condition")


def _item_end(text: str, i: int) -> int:
    """Where the item after an attribute ends (exclusive)."""
    depth = 0
    angles = 0      # template lists (`texture_storage_2d<r32uint, write>`): a `<` right after a name
    n = len(text)
    while i < n:
        c = text[i]
        if c == "<" and i > 0 and (text[i - 1].isalnum() or text[i - 1] == "_"):
            angles += 1
        elif c == ">" and angles and text[i - 1] != "-":
            angles -= 1
        if c == "/" and text.startswith("//", i):
            nl = text.find("\n", i)
            i = n if nl < 0 else nl
            continue
        if c == "/" and text.startswith("/*", i):
            close = text.find("*/", i + 2)
            i = n if close < 0 else close + 2
            continue
        if c in "([{":
            depth += 1
        elif c in ")]":
            depth -= 1
            if depth < 0:
                return i
        elif c == "}":
            depth -= 1
            if depth < 0:
                return i                      # the block around the item ends
            if depth == 0:
                after = _skip_space(text, i + 1)
                if re.match(r"else\b", text[after:after + 5]) is None:
                    return i + 1
        elif c == ";" and depth == 0 or c == "," and depth == 0 and not angles:
            return i + 1
        i += 1
    return n


def _evaluate(expr: str, features: dict[str, bool], text: str, filename: str, at: int) -> bool:
    """A condition of `!`, `&&`, `||`, parentheses, `true`, `false` and feature names."""
    parts: list[str] = []
    i = 0
    while i < len(expr):
        if expr[i:].strip() == "":
            break
        m = _COND_TOKEN.match(expr, i)
        if m is None:
            raise _error(text, filename, at, f"condition '{' '.join(expr.split())}'")
        op, lit, name = m.groups()
        if op:
            parts.append({"&&": " and ", "||": " or ", "!": " not "}.get(op, op))
        elif lit:
            parts.append(" True " if lit == "true" or (lit[0].isdigit() and int(lit.rstrip("iu")) != 0)
                         else " False ")
        else:
            parts.append(" True " if features.get(name, False) else " False ")
        i = m.end()
    try:   # only the tokens above: booleans, and, or, not, parentheses
        return bool(eval("".join(parts) or "False", {"__builtins__": {}}, {}))  # noqa: S307
    except SyntaxError:
        raise _error(text, filename, at, f"condition '{' '.join(expr.split())}'") from None


def _error(text: str, filename: str, at: int, what: str) -> KernelraceError:
    line = text.count("\n", 0, at) + 1
    col = at - (text.rfind("\n", 0, at) + 1) + 1
    return KernelraceError(f"{filename}:{line}:{col}: syntax error: {what}")
