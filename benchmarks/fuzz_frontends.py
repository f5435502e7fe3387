"""Fuzz the CUDA, Metal, OpenCL, SPIR-V and WGSL front ends with mutations of real emitted files.

Seeds are the fixtures (tests/fixtures/{cuda,metal,opencl,vulkan,wgsl}; each `.comp` shader compiled and
disassembled once) and one file TVM emits per dialect (`_merge_state_inplace`). Each case applies
one to three mutations (deleted, swapped, duplicated or replaced tokens, truncation, garbage bytes,
huge integer literals, very deep nesting, duplicated/deleted/swapped lines, lines spliced from
another seed, SPIR-V ids and opcodes swapped) and lowers the result (no analysis). The contract:
`lower_source` returns kernels, or raises KernelraceError with one line that starts with the file
name followed by `:line:col:` (or `: no kernel found`). Anything else is a failure: another
exception (RecursionError included), an unlocated or multi-line message, or a case that runs for
longer than the per-case time limit. Failures are shrunk by deleting lines and written out:

    python benchmarks/fuzz_frontends.py [--cases N] [--seed S] [--dialects cuda,metal,spirv,wgsl,opencl]
                                        [--analyse K] [--out DIR]

`--cases` is per dialect (default 100,000). tests/test_fuzz.py runs the same engine on fewer cases.
"""

from __future__ import annotations

import argparse
import contextlib
import random
import re
import signal
import sys
import threading
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from analyzer.errors import KernelraceError  # noqa: E402
from analyzer.frontend import lower_source  # noqa: E402

FIXTURES = ROOT / "tests" / "fixtures"
DIALECTS = ("cuda", "metal", "spirv", "wgsl", "opencl")
SUFFIX = {"cuda": ".cu", "metal": ".metal", "spirv": ".spvasm", "wgsl": ".wgsl", "opencl": ".cl"}
TVM_BUILDER = "tvm.relax.frontend.nn.llm._decode_kernels:_merge_state_inplace"
TVM_PARAMS = {"num_heads": 8, "head_dim": 128, "v_dtype": "float16"}
TVM_TARGET = {"cuda": "cuda", "metal": "metal", "spirv": "vulkan", "wgsl": "webgpu", "opencl": "opencl"}
CASE_SECONDS = 10.0     # a case that lowers for longer than this is a failure (a hang)

# ---------------------------------------------------------------- seeds


def tvm_seed(dialect: str) -> tuple[str, str]:
    """(name, text) of the file TVM emits for merge_state_inplace in this dialect (~1 s)."""
    from analyzer.tvm.build import build

    mod = build(TVM_BUILDER, TVM_PARAMS, TVM_TARGET[dialect])
    text = mod.files()[0][1]
    return f"tvm_merge_state{SUFFIX[dialect]}", text


def fixture_seeds(dialect: str) -> list[tuple[str, str]]:
    """(name, text) of every fixture of the dialect; GLSL shaders compiled and disassembled."""
    if dialect == "spirv":
        from analyzer.frontend.spirv_tools import compile_glsl, disassemble

        out = []
        for p in sorted((FIXTURES / "vulkan").iterdir()):
            if p.suffix == ".spvasm":
                out.append((p.name, p.read_text()))
            elif p.suffix == ".comp":
                out.append((p.name + ".spvasm", disassemble(compile_glsl(p.read_text(), p.name), p.name)))
        return out
    folder = FIXTURES / {"cuda": "cuda", "wgsl": "wgsl", "opencl": "opencl"}.get(dialect, "metal")
    return [(p.name, p.read_text()) for p in sorted(folder.glob("*" + SUFFIX[dialect]))]


def all_seeds(dialect: str, with_tvm: bool = True) -> list[tuple[str, str]]:
    seeds = fixture_seeds(dialect)
    return ([tvm_seed(dialect)] if with_tvm else []) + seeds


# ---------------------------------------------------------------- mutations

TOKEN = re.compile(
    r"\s+|//[^\n]*|/\*.*?\*/|;[^\n]*(?=\n)|\"(?:[^\"\\\n]|\\.)*\"|%?[A-Za-z_]\w*|%\w+"
    r"|0[xX][0-9A-Fa-f]+[uUlL]*|\d+(?:\.\d*)?(?:[eE][-+]?\d+)?[fFuUlLhH]*"
    r"|<<=|>>=|->|\+\+|--|&&|\|\||::|<<|>>|[<>=!+\-*/%&|^]=|.",
    re.S)
GARBAGE = ["\x00", "\x01", "\x7f", "\ufeff", "\u00e9", "\U0001f600", "\\", "`", "@", "$", "#", "?", "'",
           '"', "/*", "*/", "//", "}}", "{{", "((", "))", "[[", "]]", "<<<", ">>>", ";;", "...", "::",
           "%", "%%", "=", "|", "\t\r", "\r", "\n\n", "#define X", "#include", "\\\n", "0x", "1e", "0b1",
           "OpNop", "%1 =", "OpLabel", "OpFunctionEnd", "OpReturn", "OpBranch %", "__syncthreads();",
           "return;", "break;", "continue;", "else", "if (", "for (;;)", "while (1)", "goto",
           "threadgroup_barrier(mem_flags::mem_threadgroup);", "int", "float4", "*", "&", "->",
           "workgroupBarrier();", "loop {", "continuing {", "break if", "var<", "array<", "vec4<f32>(", ">>",
           "@builtin(", "fn", "let", "switch"]
# OpenCL's own junk, for its mutants only (the other dialects' campaigns stay as they were).
GARBAGE_OPENCL = GARBAGE + ["barrier(CLK_LOCAL_MEM_FENCE);", "__local", "__global", "get_local_id(", "vload4(",
                            "vstore4(", "(float4)(", "__attribute__((", ".s0", ".xyzw", "(int rmod_1 = 0;",
                            "atomic_inc(&", "reqd_work_group_size("]
# WGSL's own junk, for its mutants only: module imports (resolved against folders that are not
# there), qualified names, struct and array values, WESL's conditional attribute.
GARBAGE_WGSL = GARBAGE + ["#import util", "#import a::b::{c, d}", "import package::x::y;", "import a::{b, c::{d as e}};",
                          "m::", "a::b::", "array(", "array<u32, 4>(", "unpack2x16float(", "pack4x8unorm(",
                          "struct S { a: u32, b: vec2<f32> }", "S(", "var s: S;", "&s", "return;", "@if(X)",
                          ".yx", "= v.yx;"]
HUGE_INTS = ["9" * 25, "18446744073709551616", "340282366920938463463374607431768211456",
             "0x" + "f" * 40, "-" + "9" * 30, "9" * 5000, "0x" + "F" * 5000, "1e999999", "0777",
             "09", "0x", "0xg", "4294967296u", "2147483648", "-2147483649", "99999999999999999999ULL",
             "0" * 4400 + "1", "1.5e-99999", "0x1.8p99999", "1" + "0" * 4299]
NEST_DEPTHS = [30, 120, 400, 1000, 5000]


def tokens(text: str) -> list[str]:
    return TOKEN.findall(text)


def _solid(toks: list[str]) -> list[int]:
    return [i for i, t in enumerate(toks) if not t.isspace()]


def _numbers(toks: list[str]) -> list[int]:
    return [i for i, t in enumerate(toks) if t[:1].isdigit()]


def m_delete_tokens(text, rng, ctx):
    toks = tokens(text)
    solid = _solid(toks)
    if not solid:
        return text
    i = rng.choice(solid)
    del toks[i:i + rng.choice([1, 1, 1, 2, 3, 5])]
    return "".join(toks)


def m_swap_tokens(text, rng, ctx):
    toks = tokens(text)
    solid = _solid(toks)
    if len(solid) < 2:
        return text
    a = rng.randrange(len(solid))
    b = min(len(solid) - 1, a + rng.randint(1, 4)) if rng.random() < 0.6 else rng.randrange(len(solid))
    i, j = solid[a], solid[b]
    toks[i], toks[j] = toks[j], toks[i]
    return "".join(toks)


def m_duplicate_token(text, rng, ctx):
    toks = tokens(text)
    solid = _solid(toks)
    if not solid:
        return text
    toks.insert(rng.choice(solid), toks[rng.choice(solid)] + rng.choice(["", " "]))
    return "".join(toks)


def m_replace_token(text, rng, ctx):
    toks = tokens(text)
    solid = _solid(toks)
    if len(solid) < 2:
        return text
    i = rng.choice(solid)
    if toks[i].startswith("%"):    # SPIR-V: confuse one id with another
        toks[i] = rng.choice([t for t in toks if t.startswith("%")])
    else:
        toks[i] = toks[rng.choice(solid)]
    return "".join(toks)


def m_truncate(text, rng, ctx):
    if not text:
        return text
    if rng.random() < 0.5:
        return text[:rng.randrange(len(text))]
    toks = tokens(text)
    return "".join(toks[:rng.randrange(len(toks) + 1)])


def m_garbage(text, rng, ctx):
    j = rng.randrange(len(text) + 1)
    if rng.random() < 0.3:
        junk = "".join(chr(rng.randrange(0, 0x3000)) for _ in range(rng.randint(1, 6)))
    else:
        junk = rng.choice({"opencl": GARBAGE_OPENCL, "wgsl": GARBAGE_WGSL}.get(ctx.get("dialect"), GARBAGE))
    return text[:j] + junk + text[j:]


def m_huge_int(text, rng, ctx):
    toks = tokens(text)
    nums = _numbers(toks)
    if not nums:
        return m_garbage(text, rng, ctx)
    i = rng.choice(nums)
    toks[i] = rng.choice(HUGE_INTS) if rng.random() < 0.7 else str(rng.randrange(2 ** rng.randint(8, 200)))
    return "".join(toks)


def m_deep_nesting(text, rng, ctx):
    n = rng.choice(NEST_DEPTHS)
    toks = tokens(text)
    if ctx["dialect"] == "spirv":
        # SPIR-V has no brackets: nest selection constructs, or stack a long chain of one value.
        return _spirv_deep(text, rng, n)
    if rng.random() < 0.5:
        # parentheses around an operand: `x` -> `((((x))))`
        cands = [i for i, t in enumerate(toks) if t[:1].isdigit() or (t[:1].isalpha() or t[:1] == "_")]
        if not cands:
            return text
        i = rng.choice(cands)
        toks[i] = "(" * n + toks[i] + ")" * n
        return "".join(toks)
    # braces around a statement: `s;` -> `{{{{ s; }}}}`, or nested ifs
    semis = [i for i, t in enumerate(toks) if t == ";"]
    if not semis:
        return text
    end = rng.choice(semis)
    start = end
    while start > 0 and toks[start - 1] not in (";", "{", "}"):
        start -= 1
    opener = rng.choice(["{", "if (1) {", "if (threadIdx.x) {" if ctx["dialect"] == "cuda" else "if (1) {",
                         "for (int q = 0; q < 2; ++q) {"])
    toks[start:end + 1] = [opener * n] + toks[start:end + 1] + ["}" * n]
    return "".join(toks)


def _spirv_deep(text: str, rng, n: int) -> str:
    lines = text.split("\n")
    # A chain `%fz1 = OpIAdd %T %x %x; %fz2 = OpIAdd %T %fz1 %fz1; ...` right after an OpLoad.
    loads = [i for i, ln in enumerate(lines) if re.match(r"\s*(%\w+) = OpLoad (%\w+) ", ln)]
    if not loads:
        return text
    i = rng.choice(loads)
    res, ty = re.match(r"\s*(%\w+) = OpLoad (%\w+) ", lines[i]).groups()
    chain, prev = [], res
    for k in range(n):
        chain.append(f"%fz{k} = OpIAdd {ty} {prev} {prev}")
        prev = f"%fz{k}"
    return "\n".join(lines[:i + 1] + chain + lines[i + 1:])


def m_duplicate_lines(text, rng, ctx):
    lines = text.split("\n")
    i = rng.randrange(len(lines))
    chunk = lines[i:i + rng.choice([1, 1, 2, 3, 8])]
    at = i if rng.random() < 0.5 else rng.randrange(len(lines) + 1)
    lines[at:at] = chunk * rng.choice([1, 1, 2, 10])
    return "\n".join(lines)


def m_delete_lines(text, rng, ctx):
    lines = text.split("\n")
    i = rng.randrange(len(lines))
    del lines[i:i + rng.choice([1, 1, 2, 4])]
    return "\n".join(lines)


def m_swap_lines(text, rng, ctx):
    lines = text.split("\n")
    if len(lines) < 2:
        return text
    a = rng.randrange(len(lines))
    b = min(len(lines) - 1, a + rng.randint(1, 5)) if rng.random() < 0.6 else rng.randrange(len(lines))
    lines[a], lines[b] = lines[b], lines[a]
    return "\n".join(lines)


def m_splice(text, rng, ctx):
    other = rng.choice(ctx["seeds"])[1].split("\n")
    lines = text.split("\n")
    j = rng.randrange(len(other))
    at = rng.randrange(len(lines) + 1)
    lines[at:at] = other[j:j + rng.randint(1, 6)]
    return "\n".join(lines)


def m_spirv_opcode(text, rng, ctx):
    """SPIR-V: one instruction's opcode replaced by another opcode of the file, or an operand dropped."""
    lines = text.split("\n")
    ops = [i for i, ln in enumerate(lines) if re.search(r"\bOp\w+", ln)]
    if not ops:
        return text
    i = rng.choice(ops)
    if rng.random() < 0.5:
        words = re.findall(r"\bOp\w+", text)
        lines[i] = re.sub(r"\bOp\w+", rng.choice(words), lines[i], count=1)
    else:
        parts = lines[i].split(" ")
        if len(parts) > 2:
            del parts[rng.randrange(1, len(parts))]
        lines[i] = " ".join(parts)
    return "\n".join(lines)


MUTATIONS = {
    "delete_tokens": (m_delete_tokens, 6), "swap_tokens": (m_swap_tokens, 5),
    "duplicate_token": (m_duplicate_token, 3), "replace_token": (m_replace_token, 6),
    "truncate": (m_truncate, 2), "garbage": (m_garbage, 4), "huge_int": (m_huge_int, 3),
    "deep_nesting": (m_deep_nesting, 1), "duplicate_lines": (m_duplicate_lines, 4),
    "delete_lines": (m_delete_lines, 4), "swap_lines": (m_swap_lines, 3), "splice": (m_splice, 2),
    "spirv_opcode": (m_spirv_opcode, 4),
}


def mutate(text: str, rng: random.Random, dialect: str, seeds) -> tuple[str, list[str]]:
    """One to three mutations of `text`; returns the mutant and the mutations' names."""
    names = [n for n in MUTATIONS if dialect == "spirv" or n != "spirv_opcode"]
    weights = [MUTATIONS[n][1] for n in names]
    ctx = {"dialect": dialect, "seeds": seeds}
    applied = rng.choices(names, weights, k=rng.choice([1, 1, 1, 2, 2, 3]))
    for name in applied:
        text = MUTATIONS[name][0](text, rng, ctx)
    return text, applied


# ---------------------------------------------------------------- the contract


class CaseTimeout(BaseException):
    """Raised by the per-case alarm (a BaseException so that no handler of the code under test eats it)."""


@contextlib.contextmanager
def time_limit(seconds: float):
    """Interrupt the block after `seconds` of wall-clock time (main thread on Unix; else no limit)."""
    if seconds is None or threading.current_thread() is not threading.main_thread() or not hasattr(signal, "setitimer"):
        yield
        return

    def alarm(signum, frame):
        raise CaseTimeout(f"case ran for more than {seconds} s")

    old = signal.signal(signal.SIGALRM, alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


@dataclass
class Outcome:
    status: str                  # "parsed", "rejected", "failure"
    detail: str = ""             # the error message, or the failure's exception and where it came from
    kernels: list = field(default_factory=list)

    def signature(self) -> str:
        """What identifies a failure (for shrinking and counting distinct ones): its kind and the
        innermost frame of our code, or the message's shape with names and numbers blanked."""
        head = self.detail.split("\n", 1)[0]
        if head.startswith("KernelraceError"):
            head = re.sub(r"fuzz/[^:]*?\.m\d+\.\w+", "FILE", head)
            head = re.sub(r"'[^']*'|\"[^\"]*\"|\d+", "_", head)
            return head[:120]
        return head.split(": ", 1)[0]


def located(message: str, filename: str) -> bool:
    """The contract for a KernelraceError: one line, `file:line:col: ...` (line >= 1), or a whole-file
    `file: no kernel found`."""
    if len(message.splitlines()) != 1:
        return False
    m = re.match(re.escape(filename) + r":(\d+):(\d+): \S", message)
    if m:
        return int(m.group(1)) >= 1 and int(m.group(2)) >= 1
    return message.startswith(f"{filename}: no kernel found")


def _where(exc: BaseException) -> str:
    """The innermost frame of the analyzer in the traceback: file:line function."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if "/analyzer/" in f.filename]
    if not frames:
        frames = traceback.extract_tb(exc.__traceback__)[-1:]
    if not frames:
        return "?"
    f = frames[-1]
    return f"{Path(f.filename).name}:{f.lineno} {f.name}"


def run_case(text: str, dialect: str, filename: str, seconds: float | None = CASE_SECONDS) -> Outcome:
    try:
        with time_limit(seconds):
            kernels = lower_source(text, dialect, filename)
    except KernelraceError as exc:
        msg = str(exc)
        if located(msg, filename):
            return Outcome("rejected", msg)
        flat = msg[:300].replace("\r", "\\r").replace("\n", "\\n")
        return Outcome("failure", f"KernelraceError not one line `file:line:col: ...`: {flat}")
    except CaseTimeout as exc:
        return Outcome("failure", f"CaseTimeout: {exc}")
    except RecursionError as exc:
        return Outcome("failure", f"RecursionError at {_where(exc)}")
    except Exception as exc:  # the contract under test: anything else is a front-end bug
        tb = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__)[-6:])
        return Outcome("failure", f"{type(exc).__name__} at {_where(exc)}: {str(exc)[:200]}\n{tb}")
    return Outcome("parsed", kernels=kernels)


def shrink(text: str, dialect: str, filename: str, signature: str, budget: int = 120) -> str:
    """Delete chunks of lines (halves, quarters, ... single lines) while the same failure persists."""
    lines = text.split("\n")
    tries = 0
    chunk = max(1, len(lines) // 2)
    while chunk >= 1 and tries < budget:
        i, progress = 0, False
        while i < len(lines) and tries < budget:
            cand = lines[:i] + lines[i + chunk:]
            tries += 1
            out = run_case("\n".join(cand), dialect, filename, seconds=min(CASE_SECONDS, 5.0))
            if out.status == "failure" and out.signature() == signature:
                lines, progress = cand, True
            else:
                i += chunk
        if not progress:
            chunk //= 2
    return "\n".join(lines)


# ---------------------------------------------------------------- a campaign


@dataclass
class Failure:
    dialect: str
    seed: str
    mutations: list[str]
    case: int
    signature: str
    detail: str
    text: str
    shrunk: str = ""


@dataclass
class Stats:
    dialect: str
    cases: int = 0
    parsed: int = 0
    rejected: int = 0
    failures: list[Failure] = field(default_factory=list)
    seconds: float = 0.0
    analysed: int = 0
    analysis_failures: list[Failure] = field(default_factory=list)


def campaign(dialect: str, seeds: list[tuple[str, str]], cases: int, seed: int, *, tvm_share: float = 0.3,
             shrink_failures: bool = True, max_failures_per_signature: int = 1, analyse: int = 0,
             progress=None) -> Stats:
    """`cases` mutants of the seeds (the first seed, TVM's file, gets `tvm_share` of them)."""
    rng = random.Random(f"{dialect}:{seed}")
    stats = Stats(dialect)
    seen: dict[str, int] = {}
    to_analyse: list[tuple[int, str, str, list]] = []
    t0 = time.perf_counter()
    for case in range(cases):
        name, text = seeds[0] if rng.random() < tvm_share else rng.choice(seeds)
        mutant, applied = mutate(text, rng, dialect, seeds)
        filename = f"fuzz/{Path(name).stem}.m{case}{SUFFIX[dialect]}"
        out = run_case(mutant, dialect, filename)
        stats.cases += 1
        if out.status == "parsed":
            stats.parsed += 1
            if analyse and len(to_analyse) < analyse and rng.random() < 0.05:
                to_analyse.append((case, filename, name, applied, mutant))
        elif out.status == "rejected":
            stats.rejected += 1
        else:
            sig = out.signature()
            seen[sig] = seen.get(sig, 0) + 1
            if seen[sig] <= max_failures_per_signature:
                f = Failure(dialect, name, applied, case, sig, out.detail, mutant)
                if shrink_failures:
                    f.shrunk = shrink(mutant, dialect, filename, sig)
                stats.failures.append(f)
        if progress and (case + 1) % 5000 == 0:
            progress(f"  {dialect}: {case + 1} cases, {len(seen)} distinct failures")
    stats.seconds = time.perf_counter() - t0
    stats.failure_counts = seen  # type: ignore[attr-defined]
    for case, filename, name, applied, mutant in to_analyse:
        stats.analysed += 1
        detail = analyse_mutant(mutant, dialect, filename)
        if detail:
            stats.analysis_failures.append(Failure(dialect, name, applied, case, detail.split("\n")[0], detail, mutant))
    return stats


def analyse_mutant(text: str, dialect: str, filename: str, seconds: float = 20.0) -> str:
    """Run the full analysis on a mutant that lowered; '' when it ends in findings or a
    KernelraceError, else what went wrong (another exception, or longer than `seconds`)."""
    from analyzer.pipeline import Options, analyse_kernel

    options = Options(timeout_ms=200, hints="off")
    try:
        with time_limit(seconds):
            for k in lower_source(text, dialect, filename):
                analyse_kernel(k, options)
    except KernelraceError:
        return ""
    except CaseTimeout as exc:
        return f"analysis CaseTimeout: {exc}"
    except RecursionError as exc:
        return f"analysis RecursionError at {_where(exc)}"
    except Exception as exc:  # the contract under test
        return f"analysis {type(exc).__name__} at {_where(exc)}: {str(exc)[:200]}"
    return ""


def write_failure(f: Failure, out_dir: Path) -> Path:
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / f"{f.dialect}-case{f.case}{SUFFIX[f.dialect]}"
    path.write_text(f.shrunk or f.text)
    (out_dir / (path.name + ".full")).write_text(f.text)
    return path


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cases", type=int, default=100_000, help="cases per dialect (default 100000)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--dialects", default=",".join(DIALECTS))
    ap.add_argument("--analyse", type=int, default=0, metavar="K",
                    help="also run the full analysis on up to K mutants per dialect that lowered")
    ap.add_argument("--no-tvm", action="store_true", help="fixtures only (no TVM build)")
    ap.add_argument("--out", default="fuzz-failures", help="directory for failing inputs")
    args = ap.parse_args(argv)
    total_failures = 0
    print(f"{'dialect':8} {'cases':>8} {'parsed':>8} {'rejected':>9} {'failures':>9} {'distinct':>9} "
          f"{'seconds':>8} {'cases/s':>8}")
    rows = []
    for dialect in args.dialects.split(","):
        seeds = all_seeds(dialect, with_tvm=not args.no_tvm)
        st = campaign(dialect, seeds, args.cases, args.seed, analyse=args.analyse,
                      progress=lambda m: print(m, file=sys.stderr, flush=True))
        n_fail = sum(st.failure_counts.values())  # type: ignore[attr-defined]
        total_failures += n_fail + len(st.analysis_failures)
        row = (f"{dialect:8} {st.cases:8} {st.parsed:8} {st.rejected:9} {n_fail:9} {len(st.failures):9} "
               f"{st.seconds:8.1f} {st.cases / st.seconds:8.0f}")
        rows.append(row)
        print(row, flush=True)
        for f in st.failures:
            path = write_failure(f, Path(args.out))
            print(f"  FAILURE x{st.failure_counts[f.signature]} {f.signature}  (seed {f.seed}, {'+'.join(f.mutations)}) "
                  f"-> {path}", flush=True)
        if args.analyse:
            print(f"  analysed {st.analysed} lowered mutants: {len(st.analysis_failures)} failure(s)")
            for f in st.analysis_failures:
                path = write_failure(f, Path(args.out))
                print(f"  ANALYSIS FAILURE {f.signature} -> {path}")
    return 1 if total_failures else 0


if __name__ == "__main__":
    sys.exit(main())
