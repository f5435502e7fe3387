"""One memoised LALR parser per dialect, and the lexer hack that tells type names from names."""

from __future__ import annotations

import functools
import hashlib
import os
import re
import sys
from pathlib import Path

from lark import Lark, Tree
from lark.exceptions import (
    UnexpectedCharacters,
    UnexpectedEOF,
    UnexpectedInput,
    UnexpectedToken,
)
from lark.grammar import Rule
from lark.parsers.lalr_analysis import Reduce

from analyzer.errors import KernelraceError
from analyzer.frontend.lexer import FastBasicLexer

GRAMMAR_DIR = Path(__file__).resolve().parent.parent.parent / "grammars"
DIALECTS = ("cuda", "metal", "opencl", "spirv")

BUILTIN_TYPES = frozenset(
    """void bool char int float double half bfloat size_t ptrdiff_t auto
    int8_t int16_t int32_t int64_t uint8_t uint16_t uint32_t uint64_t uint ushort uchar ulong
    __half __half2 __nv_bfloat16 __nv_bfloat162 nv_bfloat16 nv_bfloat162 half2 half3 half4 half8
    bfloat16_t atomic_int atomic_uint atomic_float atomic_bool
    curandState curandState_t curandStateXORWOW curandStateXORWOW_t curandStatePhilox4_32_10
    curandStatePhilox4_32_10_t curandStateMRG32k3a curandStateMRG32k3a_t
    """.split()
    + [f"{base}{n}" for base in ("char", "uchar", "short", "ushort", "int", "uint", "long", "ulong",
                                 "longlong", "ulonglong", "float", "double", "half", "bool", "bfloat")
       for n in (2, 3, 4, 8)]
)

# OpenCL C's own type names (its vector names are the builtin ones above).
OPENCL_TYPES = frozenset("""atomic_int atomic_uint atomic_long atomic_ulong atomic_float atomic_double atomic_flag
    atomic_intptr_t atomic_uintptr_t atomic_size_t atomic_ptrdiff_t memory_order memory_scope cl_mem_fence_flags
    event_t sampler_t image1d_t image2d_t image3d_t image1d_array_t image2d_array_t image1d_buffer_t intptr_t
    uintptr_t""".split())

# Names that a file introduces as types: struct/union/class, using-aliases, typedefs,
# template parameters, and `#define uint unsigned int` style type macros.
_TYPE_INTRO = re.compile(
    r"\b(?:struct|union|class)\s+(?:__align__\s*\(\s*\d+\s*\)\s*|alignas\s*\(\s*\d+\s*\)\s*)?([A-Za-z_]\w*)"
    r"|\btypename\s+([A-Za-z_]\w*)"
    r"|\busing\s+([A-Za-z_]\w*)\s*="
    r"|\busing\s+(?:[A-Za-z_]\w*::)+([A-Za-z_]\w*)\s*;"
    r"|\btypedef\b[^;{]*?\b([A-Za-z_]\w*)\s*(?:\[[^;]*\]\s*)*;"
    r"|\btypedef\s+(?:struct|union|class)\b[^;{]*\{[^}]*\}\s*([A-Za-z_]\w*)\s*;"
    r"|\benum\s+(?:class\s+|struct\s+)?([A-Za-z_]\w*)"
    r"|#\s*define\s+([A-Za-z_]\w*)\s+(?:unsigned|signed|int|char|short|long|float|double)\b"
)


# CUDA's `half` types are typedefs of cuda_fp16.h (Metal's and OpenCL's are the language's own): a
# file that declares a variable of that name (a butterfly's span: `int half = n / 2;`, a loop's
# `for (unsigned half = 1; ...)`) does not include it, and there `half` is a name.
_HALF_TYPES = frozenset(("half", "half2", "half3", "half4", "half8"))
_HALF_VARIABLE = re.compile(r"\b(?:int|unsigned|signed|long|short|size_t|auto|u?int(?:32|64)_t)\s+half\s*[=;,)]")


# Where an introduction may start: the full pattern is tried only there (a keyword search is
# several times faster than trying the whole alternation at every position of a long file).
_TYPE_INTRO_START = re.compile(r"\b(?:struct|union|class|typename|using|typedef|enum)\b|#\s*define\b")


def type_names_of(text: str) -> frozenset[str]:
    found = set()
    match = _TYPE_INTRO.match
    for start in _TYPE_INTRO_START.finditer(text):
        m = match(text, start.start())
        if m:
            found.update(name for name in m.groups() if name)
    return BUILTIN_TYPES | found


_TEMPLATE_HEAD = re.compile(r"\btemplate\s*<")
_HEAD_WORDS = re.compile(r"(__launch_bounds__|__attribute__|alignas|__align__)\s*$")


def template_function_names(text: str) -> frozenset[str]:
    """Names of the function templates a file defines: after `template <...>`, the word before the
    first `(` outside attributes (`__launch_bounds__(256)`), unless a struct or class follows."""
    names = set()
    for m in _TEMPLATE_HEAD.finditer(text):
        i, depth = m.end(), 1
        while i < len(text) and depth:
            depth += {"<": 1, ">": -1}.get(text[i], 0)
            i += 1
        rest = text[i:i + 400]
        if re.match(r"\s*(struct|class|union)\b", rest):
            continue
        j = 0
        while True:
            k = rest.find("(", j)
            if k < 0 or rest.find(";", j, k) >= 0 or rest.find("{", j, k) >= 0:
                break
            before = rest[:k]
            if _HEAD_WORDS.search(before):   # skip the attribute's parentheses
                close = rest.find(")", k)
                j = close + 1 if close >= 0 else len(rest)
                continue
            word = re.search(r"([A-Za-z_]\w*)\s*$", before)
            if word:
                names.add(word.group(1))
            break
    return frozenset(names)


# Cooperative groups (<cooperative_groups.h>): its group types, its function templates, and its
# namespace, which is transparent (`cg::thread_block` is `thread_block`; the lowering knows them).
CG_NAMESPACE = "cooperative_groups"
CG_TYPES = frozenset({"thread_block", "thread_block_tile", "grid_group", "thread_group", "coalesced_group"})
CG_TEMPLATES = frozenset({"tiled_partition"})
_NAMESPACE_ALIAS = re.compile(r"\bnamespace\s+([A-Za-z_]\w*)\s*=\s*(?:::)?cooperative_groups\s*;")


def cg_namespaces(text: str) -> frozenset[str]:
    """`cooperative_groups` and the names a file gives it (`namespace cg = cooperative_groups;`)."""
    return frozenset({CG_NAMESPACE, *_NAMESPACE_ALIAS.findall(text)})


class TypeNamePostLex:
    """Turn NAME into TYPE_NAME for the names known to be types in this file, and into
    TEMPLATE_NAME for a function template's name followed by `<`; drop the qualifier of a name in
    a transparent namespace (`cg::`)."""

    always_accept = ("NAME",)

    def __init__(self) -> None:
        self.types: frozenset[str] = BUILTIN_TYPES
        self.templates: frozenset[str] = frozenset()
        self.namespaces: frozenset[str] = frozenset()

    def process(self, stream):
        types, templates = self.types, self.templates
        if self.namespaces:
            stream = self._unqualify(stream, self.namespaces)
        if not templates:   # TVM's output: no lookahead
            for tok in stream:
                if tok.type == "NAME" and tok.value in types:
                    tok.type = "TYPE_NAME"
                yield tok
            return
        held = None
        for tok in stream:
            if held is not None:
                if tok.type == "LESSTHAN":
                    held.type = "TEMPLATE_NAME"
                yield held
                held = None
            if tok.type == "NAME":
                if tok.value in types:
                    tok.type = "TYPE_NAME"
                elif tok.value in templates:
                    held = tok
                    continue
            yield tok
        if held is not None:
            yield held


    @staticmethod
    def _unqualify(stream, namespaces):
        held = None
        for tok in stream:
            if held is not None:
                if tok.value == "::":   # `cg::` dropped: the name after it stands alone
                    held = None
                    continue
                yield held
                held = None
            if tok.type == "NAME" and tok.value in namespaces:
                held = tok
                continue
            yield tok
        if held is not None:
            yield held


def _cache_path(dialect: str) -> str | bool:
    """Lark caches the built LALR tables (keyed on grammar, options and Lark version) per user. Lark
    checks the dialect's own grammar but not always the shared c_core.lark it imports: the file
    is named after every grammar's text, so an edit of any (or another checkout) gets its own."""
    base = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "kernelrace"
    try:
        base.mkdir(parents=True, exist_ok=True)
        digest = hashlib.sha1(b"".join(p.read_bytes() for p in sorted(GRAMMAR_DIR.glob("*.lark")))).hexdigest()[:12]
    except OSError:
        return False
    return str(base / f"{dialect}.{digest}.lark.cache")


# C's binary operators from loosest to tightest binding; all associate to the left.
_PRECEDENCE = {op: level for level, ops in enumerate(
    ("||", "&&", "|", "^", "&", "== !=", "< > <= >=", "<< >>", "+ -", "* / %")) for op in ops.split()}
_NODE = {"||": "lor", "&&": "land", "|": "bor", "^": "bxor", "&": "band"}


class BinaryChains:
    """Nests a flat chain `a op b op c ...` (the grammar's `bin_chain`) by precedence into the
    nodes a rule per level would have built: lor/land/bor/bxor [a, b], band [a, AMP, b], binop
    [a, op, b]. Runs as the parser reduces (Lark's LALR `transformer`), not as a second walk.
    Not a lark.Transformer: Lark would route every other rule's node through its `__default__`
    (two more calls per reduction); without one it builds those Trees directly."""

    def c_core__bin_chain(self, items):   # the name the imported rule has in cuda/metal.lark
        operands, ops = [items[0]], []
        for i in range(1, len(items), 2):
            op = items[i]
            level = _PRECEDENCE[str(op)]
            while ops and _PRECEDENCE[str(ops[-1])] >= level:
                self._reduce(operands, ops)
            ops.append(op)
            operands.append(items[i + 1])
        while ops:
            self._reduce(operands, ops)
        return operands[0]

    @staticmethod
    def _reduce(operands: list, ops: list) -> None:
        op, b = ops.pop(), operands.pop()
        a = operands.pop()
        name = _NODE.get(str(op), "binop")
        operands.append(Tree("c_core__" + name, [a, b] if name in ("lor", "land", "bor", "bxor") else [a, op, b]))


@functools.lru_cache(maxsize=None)
def _parser(dialect: str) -> tuple[Lark, TypeNamePostLex]:
    post = TypeNamePostLex()
    parser = Lark.open(
        str(GRAMMAR_DIR / f"{dialect}.lark"),
        parser="lalr",
        lexer="basic",
        transformer=BinaryChains() if dialect != "spirv" else None,
        postlex=post if dialect != "spirv" else None,   # SPIR-V has no type/name ambiguity
        propagate_positions=False,   # spans come from tokens, on demand (lower.position)
        maybe_placeholders=True,
        cache=_cache_path(dialect),
        _plugins={"BasicLexer": FastBasicLexer},   # Lark's lexer, one loop (frontend/lexer.py)
    )
    _share_rules(parser)
    return parser, post


class _TableRule(Rule):
    """A parse table's rule, equal only to itself: the parser asserts `rule != end_state` (an int)
    at every reduction, which Rule.__eq__ answers in Python; identity is what the table means."""
    __slots__ = ()
    __eq__ = object.__eq__
    __ne__ = object.__ne__
    __hash__ = object.__hash__


def _share_rules(parser: Lark) -> None:
    """A parser loaded from Lark's cache has two copies of each rule, one in its parse table and
    one keying its tree-building callbacks, and names its nonterminals with Token objects. Every
    reduction then looks a rule up by `Rule.__eq__` and a name by `Token.__eq__` (Python-level
    comparisons: about a tenth of the parse). Key both by the table's own objects and plain strings.
    Other Lark versions may lay this out differently; then only speed is at stake, and it is left."""
    try:
        inner = parser.parser.parser.parser
        states, callbacks = inner.parse_table.states, inner.callbacks
    except AttributeError:
        return
    rules = {id(arg): arg for actions in states.values() for action, arg in actions.values()
             if action is Reduce}
    found = [(rule, callbacks[rule]) for rule in rules.values() if rule in callbacks]
    for rule in rules.values():
        rule.origin.name = sys.intern(str(rule.origin.name))
        if type(rule) is Rule:
            rule.__class__ = _TableRule
    for state, actions in states.items():
        states[state] = {sys.intern(str(k)): v for k, v in actions.items()}
    shared = dict(found)
    for key, fn in callbacks.items():
        shared.setdefault(sys.intern(key) if type(key) is str else key, fn)
    inner.callbacks = shared


# TVM prefixes every CUDA file with the same preamble (headers, half-precision helpers, macros).
# A file is parsed as that prefix plus the rest; the prefix's tree is kept per process, so each
# distinct preamble is parsed once. The rest is parsed with the prefix's lines blanked, so that its
# positions are the file's own.
_FIRST_KERNEL = re.compile(r'^extern "C" __global__', re.MULTILINE)
_prefix_trees: dict[tuple, list] = {}


def parse(text: str, dialect: str, filename: str, line_map: list[tuple[str, int]] | None = None) -> Tree:
    """Parse a whole file; a syntax error becomes a one-line KernelraceError with file:line:col.
    `line_map` maps a preprocessed text's lines back to their files and lines (frontend/preprocess)."""
    if dialect not in DIALECTS:
        raise KernelraceError(f"{filename}: unknown language '{dialect}' (expected one of: {', '.join(DIALECTS)})")
    parser, post = _parser(dialect)
    if dialect == "spirv":
        try:
            return parser.parse(text)
        except UnexpectedInput as exc:
            raise KernelraceError(syntax_error_message(exc, text, filename)) from None
    types = type_names_of(text) | OPENCL_TYPES if dialect == "opencl" else type_names_of(text)
    if dialect == "cuda" and _HALF_VARIABLE.search(text):
        types -= _HALF_TYPES    # `int half = n / 2;`: CUDA's `half` is cuda_fp16.h's typedef
    post.templates = template_function_names(text) - types if "template" in text else frozenset()
    post.namespaces = frozenset()
    if CG_NAMESPACE in text:
        types |= CG_TYPES
        post.templates |= CG_TEMPLATES
        post.namespaces = cg_namespaces(text)
    post.types = types
    split = _FIRST_KERNEL.search(text) if dialect == "cuda" else None
    try:
        if split is None or split.start() == 0:
            return parser.parse(text)
        prefix, rest = text[:split.start()], text[split.start():]
        key = (dialect, prefix, types, post.templates)
        items = _prefix_trees.get(key)
        if items is None:
            items = list(parser.parse(prefix).children)
            if len(_prefix_trees) > 64:
                _prefix_trees.clear()
            _prefix_trees[key] = items
        tail = parser.parse("\n" * prefix.count("\n") + rest)
        return Tree("start", items + list(tail.children))
    except UnexpectedInput as exc:
        raise KernelraceError(syntax_error_message(exc, text, filename, line_map)) from None


def syntax_error_message(exc: UnexpectedInput, text: str, filename: str,
                         line_map: list[tuple[str, int]] | None = None) -> str:
    line, col = getattr(exc, "line", None), getattr(exc, "column", None)
    if isinstance(exc, UnexpectedEOF) or line is None or line < 1:
        lines = text.rstrip("\n").split("\n")   # Lark counts lines by "\n" alone
        line, col = len(lines), len(lines[-1]) + 1
        what = "unexpected end of file"
    elif isinstance(exc, UnexpectedToken):
        tok = exc.token
        what = "unexpected end of file" if tok.type == "$END" else f"unexpected '{_one_line(tok.value)}'"
    elif isinstance(exc, UnexpectedCharacters):
        what = f"unexpected character {text[exc.pos_in_stream]!r}" if exc.pos_in_stream < len(text) else "unexpected input"
    else:
        what = "syntax error"
    src_lines = text.split("\n")
    src = _one_line(src_lines[line - 1].strip(), 200) if 0 < line <= len(src_lines) else ""
    if line_map and 0 < line <= len(line_map):
        filename, line = line_map[line - 1]
    return f"{filename}:{line}:{col}: syntax error: {what}: {src}"


def _one_line(text: str, limit: int = 60) -> str:
    """A token as the message shows it: its first line (a directive may continue over several),
    cut to `limit` characters, so that the error stays one line."""
    text = str(text)
    first = text.splitlines()[0] if text.splitlines() else ""
    if len(first) > limit or first != text:
        return first[:limit].rstrip("\\ ") + "..."
    return first
