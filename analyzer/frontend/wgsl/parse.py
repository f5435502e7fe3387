"""WGSL's parser: the grammar grammars/wgsl.lark, and the post-lexer that tells template lists
from comparisons (WGSL's own spec does this in a pass over the tokens, "template list discovery")."""

from __future__ import annotations

import functools
import re

from lark import Lark, Token, Tree
from lark.exceptions import UnexpectedInput

from analyzer.errors import KernelraceError
from analyzer.frontend.parser import GRAMMAR_DIR, _cache_path, _share_rules, syntax_error_message

# Names that take a template list: `array<f32, 4>`, `vec4<f16>(...)`, `ptr<function, i32>`.
_GENERATORS = frozenset("array vec2 vec3 vec4 ptr atomic bitcast sampler binding_array".split()
                        + [f"mat{c}x{r}" for c in (2, 3, 4) for r in (2, 3, 4)])
_TEXTURE = re.compile(r"texture_\w+")
# What a template engine expands: `{{ elem }}`, `{%- include "x" -%}`, `{OUTPUT_FORMAT}`, `##FORMAT##`.
_TEMPLATE = re.compile(r"\{\{.*?\}\}|\{%.*?%\}|\{[A-Z_][A-Z0-9_]*\}|##\w+##")


class TemplatePostLex:
    """A generator name (or `var`) directly followed by `<` opens a template list: the name
    becomes TEMPLATE_NAME (VAR stays VAR), `<` TLT and its closing `>` TGT; a `>>` that closes
    two lists becomes two TGTs. Parentheses and brackets inside a list are nested expressions."""

    always_accept = ("NAME", "LT", "GT", "SHR")

    def process(self, stream):
        stack: list[int] = []   # for each open template list, the paren depth it opened at
        depth = 0
        prev = None             # held back one token: a `<` after it may make it a TEMPLATE_NAME
        for tok in stream:
            out = [tok]
            t = tok.type
            if t == "LT" and prev is not None and (
                    prev.type == "VAR" or (prev.type == "NAME" and (prev.value in _GENERATORS
                                                                    or _TEXTURE.fullmatch(prev.value)))):
                if prev.type == "NAME":
                    prev.type = "TEMPLATE_NAME"
                stack.append(depth)
                tok.type = "TLT"
            elif stack and stack[-1] == depth and t in ("GT", "SHR"):
                stack.pop()
                if t == "GT":
                    tok.type = "TGT"
                else:
                    second = Token.new_borrow_pos("GT", ">", tok)
                    second.column = (tok.column or 0) + 1
                    if stack and stack[-1] == depth:
                        stack.pop()
                        second.type = "TGT"
                    out = [Token.new_borrow_pos("TGT", ">", tok), second]
            elif t in ("LPAR", "LSQB"):
                depth += 1
            elif t in ("RPAR", "RSQB"):
                depth -= 1
                while stack and stack[-1] > depth:   # a list left open inside closed parentheses
                    stack.pop()
            elif t in ("SEMICOLON", "LBRACE", "RBRACE"):
                stack.clear()
            if prev is not None:
                yield prev
            prev = out[-1]
            yield from out[:-1]
        if prev is not None:
            yield prev


@functools.lru_cache(maxsize=None)
def _parser() -> Lark:
    parser = Lark.open(str(GRAMMAR_DIR / "wgsl.lark"), parser="lalr", lexer="basic",
                       postlex=TemplatePostLex(), propagate_positions=False, maybe_placeholders=True,
                       cache=_cache_path("wgsl"))
    _share_rules(parser)
    return parser


def parse_wgsl(text: str, filename: str, origins: list[tuple[str, int]] | None = None) -> Tree:
    """Parse a WGSL file; a syntax error is a one-line KernelraceError naming file:line:col (with
    `origins`, every line's file and line: an imported module's own)."""
    try:
        return _parser().parse(text)
    except UnexpectedInput as exc:
        message = syntax_error_message(exc, text, filename, origins)
        line = getattr(exc, "line", None)
        lines = text.split("\n")
        m = _TEMPLATE.search(lines[line - 1]) if isinstance(line, int) and 0 < line <= len(lines) else None
        if m:   # a host's `{OUTPUT_FORMAT}` string without its -D (templating.py renders the rest)
            where = message.split(": syntax error", 1)[0]
            name = re.fullmatch(r"\{([A-Z_][A-Z0-9_]*)\}|##(\w+)##", m.group(0))
            fill = (f"pass -D {name.group(1) or name.group(2)}=VALUE, the text the host puts there" if name else
                    "check the shader it renders to")
            raise KernelraceError(f"{where}: unsupported construct: template placeholder '{m.group(0)[:60]}': the file "
                                  f"is a template (tera, handlebars or a host string), not WGSL until rendered; "
                                  f"{fill}") from None
        raise KernelraceError(message) from None
    except RecursionError:
        raise KernelraceError(f"{filename}:1:1: syntax error: nested too deeply") from None
