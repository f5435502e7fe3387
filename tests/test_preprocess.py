"""The preprocessor (frontend/preprocess.py): macros, conditionals, user headers with -I and -D,
system headers known by name, and positions that map back to the file and line written."""

from analyzer.frontend.preprocess import needs_preprocessing, preprocess
from conftest import FIXTURES

RACY_HEADER = """\
__device__ void put(float *s, int i, float v) {
    s[i] = v;
}
"""

KERNEL = """\
// a kernel whose racy store is in a header
#include <cuda_runtime.h>
#include <cuda_fp16.h>
#include "put.cuh"
#define N 64
__global__ void k(const float *in) {
    __shared__ float s[N];
    put(s, threadIdx.x % 2, in[threadIdx.x]);
}
"""


def _findings(report):
    return [(f["rule"], f["second"]["file"], f["second"]["line"]) for f in report["findings"]]


def test_a_race_in_a_header_is_reported_at_the_header_line(cli, tmp_path):
    inc = tmp_path / "inc"
    inc.mkdir()
    (inc / "put.cuh").write_text(RACY_HEADER)
    src = tmp_path / "k.cu"
    src.write_text(KERNEL)
    # The header not found is a note, and the kernel that calls what it declares is `unknown`
    # naming it (issue 41: never an exit 2 for the file).
    code, report, err = cli("check", str(src), "--block-dim", "64", "--format", "json")
    assert code == 0 and f"{src}:4:10: put.cuh not found" in err and "-I" in err
    assert [(f["rule"], "'put'" in f["message"]) for f in report["findings"]] == [("unknown", True)]
    code, report, err = cli("check", str(src), "-I", str(inc), "--block-dim", "64", "--format", "json")
    assert code == 1, err
    assert {(rule, line) for rule, file, line in _findings(report) if file.endswith("put.cuh")} == {
        ("write-after-write", 2)}


def test_dash_d_selects_a_conditional_arm(cli):
    path = FIXTURES / "cuda" / "preprocessor_macros.cu"
    code, report, err = cli("check", str(path), "--block-dim", "64", "--format", "json")
    assert code == 1 and _findings(report) == [("read-after-write", str(path), 18)]
    code, report, err = cli("check", str(path), "--block-dim", "64", "-D", "USE_BARRIER", "--format", "json")
    assert code == 0 and _findings(report) == []


def test_preprocessor_errors_are_one_line(cli, tmp_path):
    cases = {"#if 1\n__global__ void k(int *a) { a[0] = 1; }\n": ":1:1: preprocessor error: Unterminated #if",
             "#error no such target\n": ":1:1: #error no such target",
             '#define N 4\n#include "missing.h"\n': ':2:1: include file "missing.h" not found',
             "#define N 4\n\n__global__ void k(int *a) { a[0] = N +; }\n": ":3:",
             # a directive cut short at the end of the file: pcpp gives no position (fuzzing found it)
             "#ifdef A\n#else\n#ifdef": ":3:1: preprocessor error"}
    for i, (text, where) in enumerate(cases.items()):
        path = tmp_path / f"e{i}.cu"
        path.write_text(text)
        code, out, err = cli("check", str(path))
        assert code == 2 and out == "" and len(err.strip().splitlines()) == 1, err
        assert err.startswith(f"kernelrace: error: {path}{where}"), err


def test_lines_map_back_through_expansion_and_skipped_arms():
    text = "#define A(x) \\\n  ((x) + 1)\n#ifdef NO\nint skipped;\n#endif\n/* two\nlines */ int y = A(2);\n"
    pre = preprocess(text, "cuda", "f.cu")
    lines = pre.text.splitlines()
    at = next(i for i, line in enumerate(lines) if "int y" in line)
    assert "((2) + 1)" in lines[at] and pre.origin(at + 1) == ("f.cu", 7)
    assert "skipped" not in pre.text


def test_only_files_that_need_it_are_preprocessed():
    assert not needs_preprocessing("#include <cuda.h>\n#pragma once\n__global__ void k() {}\n")
    assert needs_preprocessing("#define N 4\n")
    assert needs_preprocessing('#include "mine.h"\n')
    # TVM's emitted CUDA keeps its preamble's directives as opaque items (and costs nothing)
    assert not needs_preprocessing("#if X\n#define TVM_ENABLE_L2_PREFETCH 1\n#endif\n")
    text = "#include <cuda.h>\n__global__ void k() {}\n"
    assert preprocess(text, "cuda", "f.cu").text is text


def test_launch_comment_gives_extents_unless_the_command_line_does(cli):
    path = FIXTURES / "cuda" / "launch_comment.cu"
    code, report, _ = cli("check", str(path), "--format", "json")
    assert code == 1 and report["kernels"][0]["launch_from_file"] == "--blockDim=64 --gridDim=[4,2]"
    code, report, _ = cli("check", str(path), "--block-dim", "32", "--format", "json")
    assert code == 0 and "launch_from_file" not in report["kernels"][0]
    code, out, _ = cli("check", str(path))
    assert "launch extents from the file's comment: --blockDim=64 --gridDim=[4,2]" in out


def test_half_from_cuda_fp16_included_by_a_header_is_a_type(cli, tmp_path):
    """A system header is kept as written: a kernel whose own header includes cuda_fp16.h declares
    `half` values, and one without it may name a variable `half`; both are analysed."""
    (tmp_path / "common.h").write_text("#pragma once\n#include <cuda_fp16.h>\n#define N 64\n")
    src = tmp_path / "k.cu"
    src.write_text('#include "common.h"\n__global__ void k(half *a) {\n  half x = a[threadIdx.x];\n'
                   "  a[threadIdx.x + N] = x;\n}\n")
    code, report, err = cli("check", str(src), "--block-dim", "64", "--format", "json")
    assert code == 0 and report["findings"] == [], err
    (tmp_path / "common.h").write_text("#pragma once\n#define N 64\n")
    src.write_text('#include "common.h"\n__global__ void k(float *a) {\n  int half = N / 2;\n'
                   "  a[threadIdx.x + half] = a[threadIdx.x];\n}\n")
    code, report, err = cli("check", str(src), "--block-dim", "32", "--format", "json")
    assert code == 0 and report["findings"] == [], err
