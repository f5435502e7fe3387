"""The grammars: conflict-free LALR, and every file TVM emits for the corpus parses in full."""

import pytest
from lark import Lark

from analyzer.errors import KernelraceError
from analyzer.frontend.parser import DIALECTS, GRAMMAR_DIR, TypeNamePostLex, parse


@pytest.mark.parametrize("dialect", DIALECTS)
def test_grammar_builds_in_strict_mode_without_conflicts(dialect):
    # strict=True raises on any shift/reduce or reduce/reduce conflict and on terminal collisions.
    Lark.open(str(GRAMMAR_DIR / f"{dialect}.lark"), parser="lalr", lexer="basic",
              postlex=TypeNamePostLex() if dialect != "spirv" else None, strict=True,
              propagate_positions=True, maybe_placeholders=True)


CUDA_SNIPPETS = [
    "extern \"C\" __global__ void __launch_bounds__(128) k(float* __restrict__ a) {\n"
    "  float x = -0x1.86ap+15f/*-5.000000e+04*/ + 0x1p+0f;\n  a[0] = x;\n}\n",
    "#define F(a, b) \\\n  do { } while (0)\n__global__ void k(int* a) {\n#pragma unroll\n"
    "  for (int i = 0; i < 4; ++i) { while (1) { if (a[i] > 3) break; a[i] += 1; } }\n}\n",
    "__global__ void k(float* a) { __shared__ alignas(64) float s[32]; int t[1]; t[0] = threadIdx.x;\n"
    "  s[t[0] /* inline comment */] = a[t[0]]; __syncwarp(); atomicAdd(&a[0], s[(t[0] + 1) & 31]); }\n",
]

METAL_SNIPPETS = [
    "#include <metal_stdlib>\nusing namespace metal;\nstruct k_args_t { int H[2]; };\n"
    "kernel void k(device half* A [[ buffer(0) ]], constant k_args_t& arg [[ buffer(1) ]],\n"
    "  uint2 blockIdx [[threadgroup_position_in_grid]], uint2 threadIdx [[thread_position_in_threadgroup]],\n"
    "  uint lane [[thread_index_in_simdgroup]], uint sg [[simdgroup_index_in_threadgroup]]) {\n"
    "  thread float s_val[1];\n  for (int i = 0; i < 2; ++i) { threadgroup half4 tile[8]; tile[lane & 7] = *(device half4*)(A + i * 4);\n"
    "    threadgroup_barrier(mem_flags::mem_threadgroup); s_val[0] = simd_shuffle_down((float)tile[0].x, 1); }\n"
    "  A[arg.H[0] + (int)sg] = (half)s_val[0];\n}\n",
]


@pytest.mark.parametrize("src", CUDA_SNIPPETS)
def test_cuda_constructs_parse(src):
    parse(src, "cuda", "snippet.cu")


@pytest.mark.parametrize("src", METAL_SNIPPETS)
def test_metal_constructs_parse(src):
    parse(src, "metal", "snippet.metal")


def test_cuda_half_is_a_name_where_a_variable_is_declared_so():
    """CUDA's `half` is cuda_fp16.h's typedef: a file that declares a variable `half` (a
    butterfly's span) does not include it, and there `half` is a name; elsewhere it is the type."""
    for decl in ("unsigned half = blockDim.x / 2;", "int half;\n  half = 16;"):
        parse("__global__ void k(float* a) {\n  " + decl + "\n  a[threadIdx.x + half] = 0;\n}\n", "cuda", "b.cu")
    parse("__global__ void k(float* a) {\n  for (unsigned half = 1; half < 64; half <<= 1) a[half] = 0;\n}\n",
          "cuda", "loop.cu")
    parse("__global__ void k(half* a) {\n  __shared__ half s[4];\n  half x = a[0];\n  s[0] = x;\n}\n",
          "cuda", "fp16.cu")


def test_dangling_else_binds_to_nearest_if():
    tree = parse("__global__ void k(int* a) { if (a[0]) if (a[1]) a[2] = 1; else a[3] = 1; }", "cuda", "x.cu")
    ifs = [t for t in tree.iter_subtrees_topdown() if t.data.endswith("if_stmt")]
    outer, inner = ifs[0], ifs[1]
    parts = lambda t: [c for c in t.children if c is not None and getattr(c, "type", None) != "IF"]  # noqa: E731
    assert len(parts(outer)) == 2   # no else on the outer if
    assert len(parts(inner)) == 3


def _expr_tree(expr: str, dialect: str):
    """The tree of `expr` as a statement (parentheses leave no node of their own)."""
    tree = parse(f"void k(int a, int b, int c, int d) {{ x = {expr}; }}", dialect, "e")
    (stmt,) = [t for t in tree.iter_subtrees_topdown() if t.data.endswith("expr_stmt")]
    return _shape(stmt)


def _shape(t):
    return (t.data, tuple(_shape(c) for c in t.children)) if hasattr(t, "data") else str(t)


@pytest.mark.parametrize("dialect", ["cuda", "metal"])
@pytest.mark.parametrize("flat,nested", [
    ("a + b * c", "a + (b * c)"),
    ("a - b - c", "(a - b) - c"),
    ("a / b % c * d", "((a / b) % c) * d"),
    ("a << b + c", "a << (b + c)"),
    ("a < b == c >= d", "(a < b) == (c >= d)"),
    ("a & b == c", "a & (b == c)"),
    ("a | b ^ c & d", "a | (b ^ (c & d))"),
    ("a || b && c | d", "a || (b && (c | d))"),
    ("a && b || c && d", "(a && b) || (c && d)"),
    ("a + b > c ? a * b : c - d", "((a + b) > c) ? (a * b) : (c - d)"),
    ("-a * b + *c", "((-a) * b) + (*c)"),
])
def test_binary_operators_nest_by_cs_precedence_and_associativity(dialect, flat, nested):
    """The grammar reads a binary chain flat and nests it by precedence while parsing."""
    assert _expr_tree(flat, dialect) == _expr_tree(nested, dialect)


def test_nesting_differs_where_the_parentheses_do():
    assert _expr_tree("a + b * c", "cuda") != _expr_tree("(a + b) * c", "cuda")
    assert _expr_tree("a - b - c", "cuda") != _expr_tree("a - (b - c)", "cuda")


def test_syntax_error_names_file_line_and_column():
    with pytest.raises(KernelraceError) as exc:
        parse("__global__ void k(int* a) {\n  a[0] = ;\n}\n", "cuda", "bad.cu")
    assert str(exc.value).startswith("bad.cu:2:10: syntax error: unexpected ';'")
    assert "a[0] = ;" in str(exc.value)


def test_truncated_file_is_reported_at_its_end():
    with pytest.raises(KernelraceError) as exc:
        parse("__global__ void k(int* a) {\n  a[0] = 1;\n", "cuda", "cut.cu")
    assert str(exc.value).startswith("cut.cu:2:")
    assert "end of file" in str(exc.value)


_LEXED = {"cuda": "*.cu", "metal": "*.metal", "opencl": "*.cl", "spirv": "*.spvasm"}


@pytest.mark.parametrize("dialect", DIALECTS)
def test_our_lexer_loop_makes_larks_tokens(dialect):
    """frontend/lexer.py writes Lark's basic lexer out in one loop: on every file of the dialect in
    the tests, the same tokens with the same positions as Lark's own loop, and the fast loop is the
    one in use (a Lark whose internals changed would silently fall back to its own)."""
    from pathlib import Path

    from lark.lexer import BasicLexer, LexerState, TextSlice

    from analyzer.frontend.parser import _parser
    from analyzer.frontend.preprocess import preprocess

    lexer = _parser(dialect)[0].parser.lexer
    lexer = getattr(lexer, "lexer", lexer)

    def tokens(text, loop):
        out = []
        try:
            for t in loop(lexer, LexerState(TextSlice.cast_from(text)), None):
                out.append((t.type, t.value, t.start_pos, t.line, t.column, t.end_line, t.end_column, t.end_pos))
        except Exception as exc:     # a character no terminal matches: the same error either way
            out.append((type(exc).__name__, str(exc)))
        return out

    files = sorted(Path(__file__).parent.rglob(_LEXED[dialect]))
    assert files
    for path in files:
        text = path.read_text(errors="replace")
        if dialect != "spirv":
            try:
                text = preprocess(text, dialect, path.name, None).text
            except KernelraceError:
                pass
        assert tokens(text, type(lexer).lex) == tokens(text, BasicLexer.lex), path
    assert lexer._plan
