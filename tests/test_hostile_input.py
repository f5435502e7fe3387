"""Mutated kernels (deleted, swapped, truncated, garbage text) never crash kernelrace: each either
checks or fails with exit status 2 and one line naming the problem."""

import random
import shutil

import pytest

from conftest import FIXTURES

# Long: in the slow set, which .ci/run runs after the default run (pyproject.toml's markers).
pytestmark = pytest.mark.slow

SOURCES = [FIXTURES / "cuda" / "reduce_tree.cu", FIXTURES / "metal" / "matmul_tiled.metal",
           FIXTURES / "wgsl" / "override_size.wgsl",
           FIXTURES / "cuda" / "preprocessor_macros.cu"]
GARBAGE = ["\x00", "@@", "}}}", "((((", "99999999999999999999999", "#define", "'", "/*", "[[", "..."]


def mutate(text: str, rng: random.Random) -> str:
    s = list(text)
    op = rng.choice(["delete", "swap", "truncate", "garbage", "duplicate"])
    if op == "delete":
        j = rng.randrange(len(s))
        del s[j:j + rng.randint(1, 8)]
    elif op == "swap":
        a, b = rng.randrange(len(s)), rng.randrange(len(s))
        s[a], s[b] = s[b], s[a]
    elif op == "truncate":
        s = s[:rng.randrange(len(s))]
    elif op == "garbage":
        j = rng.randrange(len(s))
        s[j:j] = rng.choice(GARBAGE)
    else:
        j, k = rng.randrange(len(s)), rng.randrange(len(s))
        s[j:j] = s[k:k + 30]
    return "".join(s)


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: p.name)
def test_mutated_sources_check_or_fail_in_one_line(source, cli, tmp_path):
    rng = random.Random(source.name)
    text = source.read_text()
    shutil.copytree(FIXTURES / "cuda" / "include", tmp_path / "include")   # its user header
    for i in range(60):
        path = tmp_path / f"m{i}{source.suffix}"
        path.write_text(mutate(text, rng))
        code, out, err = cli("check", str(path), "--block-dim", "64", "--timeout", "0.5")
        assert code in (0, 1, 2), (path.read_text(), err)
        assert "Traceback" not in err and "internal error" not in err, (path.read_text(), err)
        if code == 2:
            assert len(err.strip().splitlines()) == 1 and err.startswith(f"kernelrace: error: {path}"), err
            assert out == ""


def test_deeply_nested_expression_is_a_clean_error_or_a_result(cli, tmp_path):
    path = tmp_path / "deep.cu"
    expr = "(" * 3000 + "1" + ")" * 3000
    path.write_text(f"__global__ void k(int* a) {{ a[threadIdx.x] = {expr}; }}\n")
    code, out, err = cli("check", str(path), "--block-dim", "32")
    assert code in (0, 2) and "Traceback" not in err
