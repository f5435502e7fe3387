"""The `kernelrace` command line: `check` source files, `lint` TVM kernel builders, and with no
command, lint every builder the project's configuration names (analyzer/command/config.py): a CI gate,
with baselines (analyzer/report/baseline.py) and SARIF output (analyzer/report/sarif.py)."""

from __future__ import annotations

import argparse
import re
import ast
import io
import os
import sys
from dataclasses import dataclass, replace
from pathlib import Path

from rich.console import Console
from rich.markup import escape

from analyzer import __version__
from analyzer.analysis.decision.memory_guard import DEFAULT_MB
from analyzer.analysis.stated import assumptions as stated
from analyzer.analysis.stated import contracts as buffer_contracts
from analyzer.command import cache, config, shard, suppressions
from analyzer.command.cache import ResultCache
from analyzer.command.config import LANGS, SEVERITIES, Config
from analyzer.command.inputs import kernel_files
from analyzer.command.parallel import Workers, default_jobs
from analyzer.command.progress_bar import DelayedBar
from analyzer.command.shard import Shard
from analyzer.errors import KernelraceError
from analyzer.findings import ERROR, SEVERITY_RANK, WARNING, KernelResult
from analyzer.frontend import FRONTENDS
from analyzer.pipeline import LintJob, Options, build_and_check, check_file, lint_jobs, not_analysed
from analyzer.report import baseline, concise, github
from analyzer.report import text as report
from analyzer.report import sarif
from analyzer.tvm.builders import TARGETS
from analyzer.tvm_checks import llm

EXIT_CLEAN, EXIT_FINDINGS, EXIT_BAD_INPUT = 0, 1, 2
FORMATS = ("text", "concise", "json", "sarif", "github")


class _Parser(argparse.ArgumentParser):
    def __init__(self, *args, **kwargs):
        kwargs.setdefault("allow_abbrev", False)   # `--form json` is a typo, not --format
        super().__init__(*args, **kwargs)

    def error(self, message):  # usage errors: one line, exit 2
        sys.stderr.write(f"kernelrace: error: {message}\n")
        raise SystemExit(EXIT_BAD_INPUT)


def _dims(text: str) -> tuple[int, ...]:
    try:
        dims = tuple(int(x) for x in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected X[,Y[,Z]] of integers, got '{text}'") from None
    if not 1 <= len(dims) <= 3 or any(d < 1 for d in dims):
        raise argparse.ArgumentTypeError(f"expected 1 to 3 positive integers, got '{text}'")
    return dims


def _define(text: str) -> tuple[str, int]:
    name, sep, value = text.partition("=")
    try:
        if not sep or not name.isidentifier():
            raise ValueError
        return name, int(value, 0)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected NAME=INT, got '{text}'") from None


def _macro(text: str) -> tuple[str, str]:
    name, _, value = text.partition("=")
    # NAME or a function-like NAME(ARGS), as a C compiler's -D takes (a runtime's `ld(buf,i)=buf[i]`)
    if not re.fullmatch(r"[A-Za-z_]\w*(\([\w\s,]*\))?", name.strip()):
        raise argparse.ArgumentTypeError(f"expected NAME[=VALUE], got '{text}'")
    return name.strip(), value if "=" in text else "1"


def _forced(args) -> tuple[str, ...]:
    """--include's files, absolute (each file is read from its own directory); a missing one is bad input."""
    out = []
    for f in getattr(args, "forced", None) or ():
        if not Path(f).is_file():
            raise KernelraceError(f"--include {f}: no such file")
        out.append(str(Path(f).resolve()))
    return tuple(out)


def _param(text: str) -> tuple[str, list]:
    name, sep, values = text.partition("=")
    if not sep or not name.isidentifier():
        raise argparse.ArgumentTypeError(f"expected NAME=VALUE[,VALUE...], got '{text}'")
    try:
        parsed = ast.literal_eval(f"({values},)")
    except (ValueError, SyntaxError):
        # bare words (float16) are strings
        parsed = tuple(_literal_or_str(v) for v in values.split(","))
    return name, list(parsed)


def _literal_or_str(v: str):
    try:
        return ast.literal_eval(v)
    except (ValueError, SyntaxError):
        return v


DESCRIPTION = ("Static race analyzer for GPU kernels: CUDA, Metal, OpenCL, Vulkan (GLSL, SPIR-V) and WebGPU (WGSL), "
               "hand-written or built with Apache TVM.")
USAGE_HINT = ("with no command, kernelrace lints every builder configured under [[tool.kernelrace.lint]] in "
              "pyproject.toml (or [[lint]] in kernelrace.toml), found from the current directory upwards")


def _contract(text: str):
    try:
        if stated.looks_like_expression(text):
            return stated.parse(text, "--assume")
        return buffer_contracts.parse(text, "--assume")
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got '{text}'")
    return value


def _shard(text: str) -> Shard:
    try:
        return shard.parse(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not value > 0:
        raise argparse.ArgumentTypeError(f"expected a positive number of seconds, got '{text}'")
    return value


def _run_options(p: argparse.ArgumentParser) -> None:
    """The options of a run. The bare command and `check`/`lint` all take them, before or after the
    command; an option not given is absent (SUPPRESS), so the configuration's value applies."""
    S = argparse.SUPPRESS
    g = p.add_argument_group("run options (override the configuration)")
    g.add_argument("--format", choices=FORMATS, default=S,
                   help="report format (default: text; concise: one line per finding; github: GitHub Actions "
                        "annotations)")
    g.add_argument("--strict", action=argparse.BooleanOptionalAction, default=S,
                   help="also report writes of provably equal values (benign write-write races)")
    g.add_argument("--select", default=S, metavar="RULE[,RULE]", help="rules to run (default: all)")
    g.add_argument("--timeout", type=_seconds, default=S, metavar="SECONDS",
                   help="solver budget per query, in seconds of a typical machine (deterministic; default 1)")
    g.add_argument("--fail-on", choices=SEVERITIES, default=S,
                   help="exit 1 when a reported finding has this severity or a higher one (default: error)")
    g.add_argument("--baseline", default=S, metavar="FILE", help="report only findings not in this baseline")
    g.add_argument("--write-baseline", default=S, metavar="FILE",
                   help="write today's findings to FILE as the baseline and exit 0")
    g.add_argument("-q", "--quiet", action="count", default=S,
                   help="print only the summary line; twice: print nothing but errors")
    g.add_argument("-v", "--verbose", action="store_true", default=S,
                   help="also print build times, and each kernel's analysis time and solver queries")
    g.add_argument("-o", "--output", default=S, metavar="FILE", help="write the report to FILE instead of stdout")
    g.add_argument("--emit-dir", default=S, metavar="DIR",
                   help="write the sources kernelrace analysed but did not read from disk (TVM's emitted code, a "
                        "shader's disassembly) under DIR; SARIF locations point there")
    g.add_argument("--config", default=S, metavar="FILE",
                   help="use this kernelrace.toml or pyproject.toml instead of searching for one")
    g.add_argument("--no-config", action="store_true", default=S, help="ignore configuration files")
    g.add_argument("--kernel-timeout", type=_seconds, default=S, metavar="SECONDS",
                   help="wall-clock limit per kernel (default 600): pairs not checked by then are reported "
                        "unknown, never clean")
    g.add_argument("--kernel-memory", type=_positive, default=S, metavar="MB",
                   help=f"memory limit per kernel (default {DEFAULT_MB}): a kernel whose analysis grows the process "
                        "by more is reported unknown, never clean")
    g.add_argument("-j", "--jobs", type=_positive, default=S, metavar="N",
                   help="worker processes for files and builds (default: the number of cores); the report is "
                        "the same whatever N is")
    g.add_argument("--shard", type=_shard, default=S, metavar="K/N",
                   help="run shard K of N: the files or builds are split into N disjoint parts, the same on every "
                        "machine, whose findings together are the whole run's (for CI matrices)")
    g.add_argument("--cluster", default=S, metavar="ADDRESS",
                   help="run each file or build as a task on the Dask distributed scheduler at ADDRESS "
                        "(HOST:PORT or tcp://HOST:PORT) instead of local worker processes; the report is the same")
    g.add_argument("--cache-dir", default=S, metavar="DIR",
                   help="keep analysis results here and reuse them while the source and options are unchanged "
                        "(default: $KERNELRACE_CACHE_DIR, the configuration's cache-dir, or the user cache "
                        "directory)")
    g.add_argument("--no-cache", action="store_true", default=S, help="neither read nor write the result cache")
    g.add_argument("--conditions", action="store_true", default=S,
                   help="print each kernel's race-freedom condition: the weakest condition on its parameters "
                        "and launch under which none of its races exists (docs/conditions-and-assumptions.md)")
    g.add_argument("--scope", choices=("block", "grid", "all"), default=S,
                   help="which pairs of threads race: block (two threads of one block), grid (two threads of "
                        "different blocks, on global memory), all (both; default)")
    g.add_argument("--assume", action="append", type=_contract, default=S, metavar="EXPR|[KERNEL/]BUFFER:PROPERTY",
                   help="a launch or parameter fact ('H >= blockDim.y', see docs/conditions-and-assumptions.md), "
                        "or a buffer contract: what the data the kernel reads guarantees (nondecreasing, distinct, "
                        "distinct-except(V), distinct-across(INDPTR), "
                        "range=LO..HI); repeatable, added to the configuration's (see docs/contracts.md)")
    g.add_argument("--no-contracts", action="store_true", default=S,
                   help="no buffer contracts (the configuration's and the built-in ones for TVM's runtime "
                        "included); findings name a contract that would refute them")
    _ruff_options(g)
    g.add_argument("--hints", choices=("auto", "all", "off"), default=S,
                   help="fix hints for race findings, re-checked by analysing the fixed kernel: auto (re-checked "
                        "when the kernel analyses within a few seconds; default), all (always re-checked), off")


class _DeprecatedDefine(argparse._AppendAction):
    """`--define NAME=INT`, the old spelling of --scalar: it read as the long form of -D (a
    preprocessor macro), which it is not."""

    def __call__(self, parser, namespace, values, option_string=None):
        sys.stderr.write("kernelrace: warning: --define is deprecated, use --scalar NAME=INT (a scalar kernel "
                         "parameter; -D defines a preprocessor macro)\n")
        super().__call__(parser, namespace, values, option_string)


def _scalar_option(p: argparse.ArgumentParser, help: str) -> None:
    # dest "define": the configuration's [check] `define` table holds the same bindings
    p.add_argument("--scalar", dest="define", type=_define, action="append", default=[], metavar="NAME=INT",
                   help=help)
    p.add_argument("--define", dest="define", type=_define, action=_DeprecatedDefine, default=[],
                   help=argparse.SUPPRESS)


def _ruff_options(g) -> None:
    """As ruff has them: which rules run, what the report counts, and what the exit status says."""
    S = argparse.SUPPRESS
    g.add_argument("--ignore", default=S, metavar="RULE[,RULE]",
                   help="rules not to run (replaces the configuration's `ignore`)")
    g.add_argument("--extend-ignore", default=S, metavar="RULE[,RULE]",
                   help="rules not to run, besides the ignored ones")
    g.add_argument("--exit-zero", action="store_true", default=S,
                   help="exit 0 even when findings are reported (2 still means bad usage or input)")
    g.add_argument("--statistics", action="store_true", default=S,
                   help="print how many findings each rule reported instead of the findings")
    g.add_argument("--warn-unused-ignores", action="store_true", default=S,
                   help="list the `kernelrace: ignore` comments that silenced nothing (on stderr; they count as "
                        "warnings for --fail-on)")


def _confirm_options(p: argparse.ArgumentParser, flag: bool, define: bool = False) -> None:
    if flag:
        p.add_argument("--confirm", action="store_true",
                       help="run each race finding on concrete inputs and report the output it changes "
                            "(as `kernelrace confirm`)")
    if define:
        _scalar_option(p, "a scalar kernel parameter's value for the run (small shapes run in seconds)")
    p.add_argument("--seed", type=int, default=0, help="the seed of the run's random inputs (default 0)")
    p.add_argument("--blocks", type=_positive, default=1, metavar="N",
                   help="run the witness's block and the blocks after it, N in all (default 1)")


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="kernelrace", description=DESCRIPTION, epilog=USAGE_HINT)
    p.add_argument("--version", action="version", version=f"kernelrace {__version__}")
    _run_options(p)
    sub = p.add_subparsers(dest="command", parser_class=_Parser,
                           metavar="{check,lint,confirm,llm,model,rules,explain}")

    c = sub.add_parser("check", help="check CUDA, Metal, OpenCL, Vulkan (GLSL, SPIR-V) or WebGPU (WGSL) source files")
    c.add_argument("files", nargs="+", metavar="FILE", help="kernel files or directories; - reads standard input")
    c.add_argument("--lang", choices=LANGS)
    c.add_argument("--stdin-filename", metavar="NAME",
                   help="with `check -`: the file name standard input stands for (findings name it, its extension "
                        "gives the dialect, #include \"...\" is searched from its directory)")
    c.add_argument("--block-dim", type=_dims, help="threads per block X[,Y[,Z]] (default: symbolic)")
    c.add_argument("--grid-dim", type=_dims, help="blocks per grid X[,Y[,Z]] (default: symbolic)")
    _scalar_option(c, "bind a scalar kernel parameter to a value")
    c.add_argument("-I", dest="include", action="append", default=[], metavar="DIR",
                   help="search DIR for #include \"...\" headers (after the including file's directory)")
    c.add_argument("-D", dest="macro", type=_macro, action="append", default=[], metavar="NAME[=VALUE]",
                   help="define a preprocessor macro (VALUE defaults to 1)")
    c.add_argument("--include", dest="forced", action="append", default=[], metavar="FILE",
                   help="read FILE before each CUDA, OpenCL or Metal file's first line, as a compiler's -include "
                        "does (what a build prepends to the source: its macros and types); for WGSL, a module "
                        "the shader sees whole (what a host concatenates to it)")
    c.add_argument("--frontend", choices=FRONTENDS, default="auto",
                   help="how hand-written CUDA, OpenCL and Metal are read: auto (clang where it reads the file "
                        "cleanly, else Lark, else clang), clang, lark (docs/frontends.md)")
    _confirm_options(c, flag=True)
    _run_options(c)

    li = sub.add_parser("lint", help="build a TVM kernel builder and check every kernel it emits")
    li.add_argument("builder", metavar="MODULE:FUNCTION")
    li.add_argument("--target", default="cuda,metal", help="comma-separated targets: cuda, metal, vulkan, webgpu, "
                                                           "opencl")
    li.add_argument("--param", type=_param, action="append", default=[], metavar="NAME=VALUE[,VALUE...]",
                    help="builder parameter; several values build every combination")
    _confirm_options(li, flag=True, define=True)
    _run_options(li)

    co = sub.add_parser("confirm", help="check, then run each race finding's witness on concrete inputs and show "
                                        "which output elements the race changes",
                        description="Check files (as `check`) or a TVM builder MODULE:FUNCTION (as `lint`), then run "
                                    "each race finding's block on seeded inputs in the order that loses, against "
                                    "its fix hint or the reverse order, and report the output elements that "
                                    "differ (docs/confirm.md).")
    co.add_argument("inputs", nargs="+", metavar="FILE|MODULE:FUNCTION")
    co.add_argument("--lang", choices=LANGS)
    co.add_argument("--block-dim", type=_dims, help="threads per block X[,Y[,Z]] (files)")
    co.add_argument("--grid-dim", type=_dims, help="blocks per grid X[,Y[,Z]] (files)")
    co.add_argument("-I", dest="include", action="append", default=[], metavar="DIR")
    co.add_argument("-D", dest="macro", type=_macro, action="append", default=[], metavar="NAME[=VALUE]")
    co.add_argument("--include", dest="forced", action="append", default=[], metavar="FILE")
    co.add_argument("--target", help="comma-separated targets for a builder (default: cuda; with --runtime opencl: "
                                      "opencl)")
    co.add_argument("--runtime", choices=("interpreter", "opencl"), default="interpreter",
                    help="where the findings run: kernelrace's IR interpreter (default), or, for a TVM builder, its "
                         "OpenCL build on an OpenCL device found through pyopencl, as built and with each fix hint "
                         "applied (docs/confirm.md)")
    co.add_argument("--param", type=_param, action="append", default=[], metavar="NAME=VALUE[,VALUE...]",
                    help="builder parameter")
    _confirm_options(co, flag=False, define=True)
    _run_options(co)

    ll = sub.add_parser("llm", help="build and check every kernel TVM's LLM runtime (paged KV cache, sampler) "
                                    "uses for one model shape",
                        description="Build and check every kernel TVM's paged KV cache and LLM runtime use for one "
                                    "model shape, on each target, and print a kernel x target table. The shape comes "
                                    "from the options, or from a Hugging Face config.json (--model-config); options "
                                    "override the file.")
    ll.add_argument("--num-qo-heads", type=_positive, metavar="N", help="query heads (num_attention_heads)")
    ll.add_argument("--num-kv-heads", type=_positive, metavar="N", help="key/value heads (num_key_value_heads)")
    ll.add_argument("--head-dim", type=_positive, metavar="D", help="head dimension")
    ll.add_argument("--dtype", choices=llm.DTYPES, help="KV cache dtype (default: float16)")
    ll.add_argument("--page-size", type=_positive, metavar="N", help="KV cache page size (default: 16)")
    ll.add_argument("--target", default="cuda,metal", help="comma-separated targets: cuda, metal, vulkan, webgpu, "
                                                            "opencl (default: cuda,metal)")
    ll.add_argument("--sliding-window", type=_positive, nargs="?", const=llm.SLIDING_WINDOW_SIZE, metavar="SIZE",
                    help=f"also the sliding-window decode and prefill kernels (window SIZE, default "
                         f"{llm.SLIDING_WINDOW_SIZE})")
    ll.add_argument("--kv-lora-rank", type=_positive, metavar="N", help="MLA latent dimension (with --qk-rope-head-dim; "
                                                                        "without both, the MLA kernels are skipped)")
    ll.add_argument("--qk-rope-head-dim", type=_positive, metavar="N", help="MLA RoPE dimension")
    ll.add_argument("--model-config", metavar="CONFIG.JSON", nargs="+",
                    help="read the shape from Hugging Face config.json files, or every *.json of a directory "
                         "(num_attention_heads, num_key_value_heads, head_dim or hidden_size, torch_dtype, "
                         "sliding_window, kv_lora_rank, qk_rope_head_dim, text_config); one table per model, "
                         "shapes shared by several models built once; `--config FILE.json` is read as this too")
    ll.add_argument("--only", metavar="NAME[,NAME]",
                    help="build only the kernels whose table name contains one of the words; the others are "
                         "listed as skipped (for quick runs and tests)")
    _run_options(ll)

    _model_parser(sub)
    sub.add_parser("rules", help="list the rules")
    ex = sub.add_parser("explain", help="print a rule's documentation")
    ex.add_argument("rule")
    return p


@dataclass
class Settings:
    """What one run does: the command line over the configuration over the defaults."""
    options: Options
    fail_on: str
    severity: dict[str, str]
    suppress: list
    format: str
    quiet: int
    verbose: bool
    baseline: str | None
    write_baseline: str | None
    output: str | None
    emit_dir: str | None
    jobs: int = 1
    cache: ResultCache | None = None
    shard: Shard | None = None
    cluster: str | None = None      # a Dask scheduler's address
    # ruff's: exit 0 whatever is found, counts per rule, comments that silenced nothing
    exit_zero: bool = False
    statistics: bool = False
    warn_unused_ignores: bool = False


def _config(args) -> Config:
    if getattr(args, "no_config", False):
        if getattr(args, "config", None):
            raise KernelraceError("--config and --no-config cannot be used together")
        return Config()
    if getattr(args, "config", None):
        return config.load(args.config)
    return config.discover()


def _settings(args, cfg: Config) -> Settings:
    from rules import RULES

    opt = lambda name: getattr(args, name, None)  # noqa: E731  (absent: not given on the command line)
    select = _selected(args, cfg, RULES)
    strict = opt("strict") if opt("strict") is not None else bool(cfg.strict)
    timeout = opt("timeout") or cfg.timeout or 1.0
    quiet, verbose = opt("quiet") or 0, bool(opt("verbose"))
    if quiet and verbose:
        raise KernelraceError("--quiet and --verbose cannot be used together")
    if opt("baseline") and opt("write_baseline"):
        raise KernelraceError("--baseline and --write-baseline cannot be used together")
    if opt("shard") and opt("write_baseline"):
        raise KernelraceError("--write-baseline writes the whole run's findings: not with --shard (write it from "
                              "a run without shards)")
    if opt("statistics") and (opt("format") or "text") not in ("text", "concise", "json"):
        raise KernelraceError(f"--statistics prints counts as text or JSON, not --format {opt('format')}")
    if opt("cluster") and opt("jobs"):
        raise KernelraceError("--cluster and --jobs cannot be used together (the cluster's workers run the tasks)")
    return Settings(Options(strict=strict, timeout_ms=int(timeout * 1000), select=select,
                            hints=opt("hints") or "auto", kernel_timeout_s=opt("kernel_timeout") or 600.0,
                            kernel_memory_mb=opt("kernel_memory") or cfg.kernel_memory or DEFAULT_MB,
                            explain=verbose, scope=opt("scope") or cfg.scope or "all",
                            contracts=tuple(cfg.assume) + tuple(opt("assume") or ()),
                            no_contracts=bool(opt("no_contracts")), conditions=bool(opt("conditions"))),
                    opt("fail_on") or cfg.fail_on or ERROR, dict(cfg.severity), list(cfg.suppress),
                    opt("format") or "text", quiet, verbose, opt("baseline"), opt("write_baseline"),
                    opt("output"), opt("emit_dir"), opt("jobs") or cfg.jobs or default_jobs(), _cache(args, cfg),
                    opt("shard"), opt("cluster"), bool(opt("exit_zero")), bool(opt("statistics")),
                    bool(opt("warn_unused_ignores")))


def _rule_list(text: str, flag: str, rules) -> tuple[str, ...]:
    names = tuple(s.strip() for s in text.split(",") if s.strip())
    for s in names:
        if s not in rules:
            raise KernelraceError(f"{flag}: unknown rule '{s}' (known: {', '.join(rules)})")
    return names


def _selected(args, cfg: Config, rules) -> tuple[str, ...]:
    """The rules to run, as ruff chooses them: --select (else the configuration's select, else all),
    less --ignore (else the configuration's ignore) and both extend-ignore lists. Empty: all."""
    opt = lambda name: getattr(args, name, None)  # noqa: E731
    select = _rule_list(args.select, "--select", rules) if opt("select") is not None else (cfg.select or ())
    ignore = _rule_list(args.ignore, "--ignore", rules) if opt("ignore") is not None else (cfg.ignore or ())
    ignore += cfg.extend_ignore + (_rule_list(args.extend_ignore, "--extend-ignore", rules)
                                   if opt("extend_ignore") is not None else ())
    if not ignore:
        return select
    left = tuple(r for r in (select or tuple(rules)) if r not in ignore)
    if not left:
        raise KernelraceError("every rule is ignored (--select, --ignore, --extend-ignore and the configuration): "
                              "nothing to check")
    return left


def _cache(args, cfg: Config) -> ResultCache | None:
    """Off with --no-cache or $KERNELRACE_NO_CACHE; else in --cache-dir, $KERNELRACE_CACHE_DIR, the
    configuration's cache-dir or the user cache directory, the first given."""
    if getattr(args, "no_cache", False) and getattr(args, "cache_dir", None):
        raise KernelraceError("--cache-dir and --no-cache cannot be used together")
    if getattr(args, "no_cache", False) or os.environ.get(cache.NO_CACHE_ENV, "") not in ("", "0"):
        return None
    where = getattr(args, "cache_dir", None) or os.environ.get(cache.ENV) or cfg.cache_dir or cache.default_dir()
    if Path(where).exists() and not Path(where).is_dir():
        raise KernelraceError(f"{where}: the cache directory is a file")
    return ResultCache(str(Path(where).absolute()))


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser()
    args = parser.parse_args(argv)
    args.argv = ["kernelrace", *argv]
    err = Console(stderr=True, highlight=False, soft_wrap=True, emoji=False)
    try:
        return _run(args, parser, err)
    except KernelraceError as exc:
        err.print(f"kernelrace: error: {exc}", markup=False)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        return 130
    except RecursionError:
        err.print("kernelrace: error: input nested too deeply to analyse", markup=False)
        return EXIT_BAD_INPUT
    except Exception as exc:  # a bug of ours: still one line, and never a partial report
        err.print(f"kernelrace: internal error: {type(exc).__name__}: {exc} (please report this)", markup=False)
        return EXIT_BAD_INPUT


def _check_output_path(path: str, what: str) -> None:
    p = Path(path)
    if p.is_dir():
        raise KernelraceError(f"{path}: cannot write the {what}: it is a directory")
    if not p.parent.is_dir():
        raise KernelraceError(f"{path}: cannot write the {what}: no directory '{p.parent}'")


def _run(args, parser: argparse.ArgumentParser, err: Console) -> int:
    from rules import RULES

    if args.command == "rules":
        out = Console(highlight=False, soft_wrap=True)
        for r in RULES.values():
            out.print(f"{r.name:<20} {r.severity:<8} {r.summary}", markup=False)
        return EXIT_CLEAN
    if args.command == "explain":
        rule = RULES.get(args.rule)
        if rule is None:
            raise KernelraceError(f"unknown rule '{args.rule}' (known: {', '.join(RULES)})")
        Console(highlight=False, soft_wrap=True).print(rule.doc, markup=False)
        return EXIT_CLEAN

    if args.command == "llm" and str(getattr(args, "config", "") or "").endswith(".json"):
        # A kernelrace configuration is TOML; a JSON file given to `llm --config` is the model's config.json.
        if args.model_config:
            raise KernelraceError(f"--config {args.config} and --model-config {args.model_config}: give the "
                                  f"model's config.json once")
        args.model_config = [args.config]
        del args.config
    cfg = _config(args)
    for w in cfg.warnings:
        err.print(f"kernelrace: warning: {w}", markup=False)
    st = _settings(args, cfg)
    if args.command is None:
        if cfg.path is None:
            parser.print_usage(sys.stderr)
            raise KernelraceError("no command given and no configuration found (kernelrace.toml, or "
                                  "[tool.kernelrace] in pyproject.toml, here or in a parent directory)")
        if not cfg.lint:
            raise KernelraceError(f"{config.shown(cfg.path)}: no lint entries ([[tool.kernelrace.lint]]): "
                                  f"nothing to lint")
    # Fail on bad files before a long run, not after it.
    known = baseline.load(st.baseline) if st.baseline else None
    if st.write_baseline:
        _check_output_path(st.write_baseline, "baseline")
    if st.output:
        _check_output_path(st.output, "report")
    if st.emit_dir and Path(st.emit_dir).exists() and not Path(st.emit_dir).is_dir():
        raise KernelraceError(f"{st.emit_dir}: --emit-dir needs a directory, and this is a file")

    results: list[KernelResult] = []
    stdin_texts: dict[str, str] = {}    # `check -`: the name given to standard input -> its text
    inline = suppressions.Inline(stdin_texts, tuple(RULES) + config.PSEUDO_RULES)
    emitted: dict[str, str] = {}    # virtual source name -> the file --emit-dir wrote it to
    sharded: dict = {}              # --shard: what the report says of the shard
    llm_run = model_run = None
    if args.command == "confirm" or getattr(args, "confirm", False):
        if st.cluster:
            raise KernelraceError("--cluster does not run confirm: the findings run in this process (it needs "
                                  "each kernel's IR)")
        results = _confirm(args, cfg, st, emitted, sharded)
    elif args.command == "llm":
        llm_run = _llm(args, st, err, emitted, sharded)
        results = llm_run[2]
    elif args.command == "model":
        model_run = _model(args, st, err, emitted)
        results = model_run.results
    elif args.command == "check":
        defines = dict(cfg.check.define) | dict(args.define)
        # the configuration's include directories are relative to the file that names them
        configured = tuple(str(cfg.root / d) if cfg.root else d for d in cfg.check.include)
        st = replace(st, options=replace(st.options, include_dirs=tuple(args.include) + configured,
                                         macros=tuple(args.macro), frontend=getattr(args, "frontend", "auto"),
                                         forced_includes=_forced(args),
                                         contracts=st.options.contracts + tuple(cfg.check.assume)))
        skipped: list[str] = []
        if args.files == ["-"]:
            files = []
            results.extend(_check_stdin(args, cfg, st, defines, stdin_texts))
        elif "-" in args.files:
            raise KernelraceError("`-` (standard input) must be the only file")
        else:
            if args.stdin_filename:
                raise KernelraceError("--stdin-filename names standard input: use it with `check -`")
            files = _sharded(kernel_files(args.files, cfg.exclude, skipped), st, sharded, "files", lambda f: f)
        for f in files:
            inline.read(f)
        if st.verbose:
            for f in skipped:
                err.print(f"skipped {f}: not a kernel file (unknown language)", markup=False)
        with Workers(min(st.jobs, max(len(files), 1)), st.cluster) as workers:
            handles = [workers.submit(check_file, f, args.lang or cfg.check.lang,
                                      args.block_dim or cfg.check.block_dim, args.grid_dim or cfg.check.grid_dim,
                                      defines, st.options, st.cache) for f in files]
            with DelayedBar(err, len(files), "checking", not st.quiet) as bar:   # stderr on a terminal, after 2 s
                for f, h in _each_unit(files, handles):
                    bar.advance(f)
                    if isinstance(h, KernelraceError):
                        results.append(not_analysed(f, str(h)))
                    else:
                        results.extend(h)
        if st.emit_dir:   # a compiled shader's disassembly, which locations point into
            emitted.update(_emit(results, sarif.check_sources(results), st.emit_dir))
    else:
        if cfg.root is not None and str(cfg.root) not in sys.path:
            sys.path.insert(0, str(cfg.root))   # builders are named relative to the configuration
        jobs = _sharded(_jobs(args, cfg), st, sharded, "builds", _job_identity)
        show_progress = not st.quiet and (st.verbose or (st.format == "text" and err.is_terminal))
        with Workers(min(st.jobs, len(jobs)), st.cluster) as workers:
            handles = [workers.submit(build_and_check, job.builder, job.params, job.target, st.options,
                                      bool(st.emit_dir), st.cache) for job in jobs]
            with DelayedBar(err, len(jobs), "building", not st.quiet) as bar:   # stderr on a terminal, after 2 s
                for job, h in _each_unit(jobs, handles):
                    shown = ", ".join(f"{k}={v!r}" for k, v in job.params.items())
                    bar.advance(f"{job.builder} [{job.target}]")
                    if show_progress and not st.verbose:
                        err.print(f"building {job.builder} for {job.target} ({shown})", markup=False)
                    if isinstance(h, KernelraceError):
                        results.append(not_analysed(job.builder, str(h), job.target, job.params))
                        continue
                    kernels, build_seconds, sources = h
                    if show_progress and st.verbose:
                        err.print(f"built {job.builder} for {job.target} ({shown}) in {build_seconds:.2f} s, "
                                  f"analysed {len(kernels)} kernel(s) in {sum(k.seconds for k in kernels):.2f} s{_cached(kernels)}",
                                  markup=False)
                    if st.emit_dir:
                        emitted.update(_emit(kernels, sources, st.emit_dir))
                    results.extend(kernels)

    results, hidden = _filter(results, st, known, inline)
    code = _exit_status(results, st.fail_on)
    if st.warn_unused_ignores:
        unused = inline.unused((st.options.select or tuple(RULES)) + config.PSEUDO_RULES)
        for d, why in unused:
            err.print(f"{d.file}:{d.line}:{d.col}: warning: unused suppression `{d.text()}`: {why}", markup=False)
        if unused and SEVERITY_RANK[st.fail_on] <= SEVERITY_RANK[WARNING]:
            code = EXIT_FINDINGS
    if st.write_baseline:
        n = baseline.write(st.write_baseline, results)
        code = EXIT_CLEAN
    llm_table = None
    if llm_run is not None:
        runs, targets, _ = llm_run
        tables = [llm.table(shape, targets, cells, results, models) for models, shape, cells in runs]
        llm_table = tables[0] if len(tables) == 1 else tables   # several models: one table each
        failed = sum(c.failed is not None for _, _, cells in runs for c in cells)
        if failed:
            code = EXIT_BAD_INPUT
    if model_run is not None:
        llm_table = model_run.table()
        failed = sum(c.failed is not None for c in model_run.cells)
        if failed:
            code = EXIT_BAD_INPUT
    if st.exit_zero and code == EXIT_FINDINGS:
        code = EXIT_CLEAN
    invocation = {"argv": args.argv, "exitCode": code, "workingDirectory": os.getcwd()} | hidden
    if sharded:
        invocation["shard"] = sharded
    if args.command == "lint" or getattr(args, "builder", None):
        invocation["builder"] = args.builder
    elif args.command is None and len({e.builder for e in cfg.lint}) == 1:
        invocation["builder"] = cfg.lint[0].builder
    if llm_table is not None:
        invocation["llm"] = llm_table
    _report(results, hidden, st, emitted, invocation, llm_table, sharded or None)
    if st.write_baseline and st.quiet < 2:
        err.print(f"kernelrace: wrote {n} finding(s) to the baseline {st.write_baseline}", markup=False)
    if llm_table is not None and code == EXIT_BAD_INPUT:
        err.print(f"kernelrace: error: {failed} kernel/target cell(s) could not be built or analysed "
                  f"(marked failed in the table)", markup=False)
    return code


def _each_unit(units: list, handles: list):
    """(unit, its result, or the KernelraceError it ended in: bad input, a worker that died), in
    order: one unit's failure is its own `unknown` entry and the run goes on. When every unit
    failed, nothing was analysed: the first failure is the run's error (exit 2)."""
    failures: list[KernelraceError] = []
    for unit, h in zip(units, handles):
        try:
            out = h.result()
        except Exception as exc:  # noqa: BLE001  (a bug met in one unit: reported there, the run goes on)
            if not isinstance(exc, KernelraceError):
                exc = KernelraceError(f"{unit if isinstance(unit, str) else getattr(unit, 'builder', unit)}: "
                                      f"internal error: {type(exc).__name__}: {exc} (please report this)")
            failures.append(exc)
            if len(failures) == len(units):
                raise failures[0] from None
            out = exc
        yield unit, out


def _check_stdin(args, cfg: Config, st: Settings, defines: dict[str, int],
                 texts: dict[str, str]) -> list[KernelResult]:
    """`check -`: the source from standard input, checked in this process under --stdin-filename
    (the results are not cached: an editor sends each keystroke's text)."""
    from analyzer.frontend import lang_of
    from analyzer.frontend.preprocess import PreprocessOptions
    from analyzer.pipeline import check_text, source_from

    name = args.stdin_filename or "-"
    lang = args.lang or cfg.check.lang or lang_of(name)
    if lang is None:
        raise KernelraceError(f"check -: no dialect for standard input: give --stdin-filename NAME with the file's "
                              f"extension (.cu, .metal, .cl, .spvasm, .spv, .comp, .wgsl) or --lang")
    data = sys.stdin.buffer.read()
    pp = PreprocessOptions(st.options.include_dirs, st.options.macros, st.options.forced_includes)
    text, lang, shown = source_from(data, name, lang, pp)
    if Path(name).suffix != ".spv":
        texts[name] = data.decode("utf-8", errors="replace")   # where `kernelrace: ignore` comments are read
    return check_text(text, lang, shown, args.block_dim or cfg.check.block_dim, args.grid_dim or cfg.check.grid_dim,
                      defines, st.options, name)


def _confirm(args, cfg: Config, st: Settings, emitted: dict[str, str], sharded: dict) -> list[KernelResult]:
    """`confirm`, `check --confirm`, `lint --confirm`: the check in this process (the run needs each
    kernel's IR, which workers and the cache do not keep), then each race finding run."""
    from analyzer.command.confirm import confirm_results
    from analyzer.pipeline import analyse_kernel, built_kernels, check_built, read_source, text_kernels, \
        with_builtin_contracts
    from analyzer.tvm.build import build

    defines = dict(getattr(args, "define", []) or [])
    runtime = getattr(args, "runtime", "interpreter")
    if args.command == "confirm":
        if runtime == "opencl" and args.target not in (None, "opencl"):
            raise KernelraceError(f"--runtime opencl runs the builder's opencl build: --target {args.target} "
                                  f"does not go with it")
        args.target = args.target or ("opencl" if runtime == "opencl" else "cuda")
    builder = None
    if args.command == "lint":
        builder = args.builder
    elif args.command == "confirm":
        first = args.inputs[0]
        if len(args.inputs) == 1 and ":" in first and not Path(first).exists():
            builder = first
    pairs = []
    if runtime == "opencl":
        return _confirm_opencl(args, cfg, st, emitted, builder, defines, sharded)
    if builder is not None:
        if args.command == "confirm":
            args.builder = builder
            args.command = "lint"
        jobs = _sharded(_jobs(args, cfg), st, sharded, "builds", _job_identity)
        args.command = "confirm" if not getattr(args, "confirm", False) else args.command
        for job in jobs:
            mod = build(job.builder, job.params, job.target)
            kernels = built_kernels(mod)
            results = check_built(mod, with_builtin_contracts(st.options, job.builder, job.params), kernels)
            pairs.extend(zip(kernels, results))
            if st.emit_dir:
                emitted.update(_emit(results, sarif.built_sources(mod), st.emit_dir))
    else:
        files = _sharded(kernel_files(args.inputs if args.command == "confirm" else args.files, cfg.exclude, []),
                         st, sharded, "files", lambda f: f)
        options = replace(st.options, include_dirs=tuple(args.include), macros=tuple(args.macro),
                          forced_includes=_forced(args))
        block_dim = args.block_dim or cfg.check.block_dim
        grid_dim = args.grid_dim or cfg.check.grid_dim
        static_defines = dict(cfg.check.define) | defines
        for f in files:
            text, lang, name = read_source(f, args.lang or cfg.check.lang)
            kernels, said = text_kernels(text, lang, name, block_dim, grid_dim, static_defines, options, f)
            for k in kernels:
                result = analyse_kernel(k, options)
                result.launch_from_file = said
                pairs.append((k, result))
    confirm_results(pairs, defines, args.seed, args.blocks)
    return [r for _, r in pairs]


def _confirm_opencl(args, cfg: Config, st: Settings, emitted: dict[str, str], builder: str | None,
                    defines: dict[str, int], sharded: dict) -> list[KernelResult]:
    """`confirm --runtime opencl`: each build checked, then run on an OpenCL device as built and with
    each race finding's fix hint applied (analyzer/dynamic/opencl_run.py)."""
    from analyzer.dynamic import opencl_run
    from analyzer.pipeline import built_kernels, check_built, with_builtin_contracts
    from analyzer.tvm.build import build_lowered

    if builder is None:
        raise KernelraceError("--runtime opencl runs a TVM builder (MODULE:FUNCTION); for source files use the "
                              "interpreter (the default --runtime)")
    device = opencl_run.find_device()      # before a build that could not be run anyway
    args.builder, args.command = builder, "lint"
    jobs = _sharded(_jobs(args, cfg), st, sharded, "builds", _job_identity)
    args.command = "confirm"
    out: list[KernelResult] = []
    for job in jobs:
        mod, module, host = build_lowered(job.builder, job.params, job.target)
        results = check_built(mod, with_builtin_contracts(st.options, job.builder, job.params), built_kernels(mod))
        opencl_run.confirm_build(mod, module, host, results, defines, args.seed, device)
        if st.emit_dir:
            emitted.update(_emit(results, sarif.built_sources(mod), st.emit_dir))
        out.extend(results)
    return out


def _cached(kernels: list[KernelResult]) -> str:
    return " (cached)" if kernels and all(k.cached for k in kernels) else ""


def _targets(text: str) -> list[str]:
    targets = [t for t in text.split(",") if t]
    for t in targets:
        if t not in TARGETS:
            raise KernelraceError(f"unsupported target '{t}' (expected one of: {', '.join(TARGETS)})")
    if not targets:
        raise KernelraceError("--target: no target given")
    return targets


def _llm(args, st: Settings, err: Console, emitted: dict[str, str], sharded: dict):
    """`kernelrace llm`: build and check every kernel of each model's shape on every target.
    Returns ([(models, shape, cells)], targets, results), one entry per distinct shape (the models
    that share it are built once); the tables are made after the findings are filtered."""
    targets = list(dict.fromkeys(_targets(args.target)))
    given = {"num_qo_heads": args.num_qo_heads, "num_kv_heads": args.num_kv_heads, "head_dim": args.head_dim,
             "dtype": args.dtype, "page_size": args.page_size, "sliding_window": args.sliding_window,
             "kv_lora_rank": args.kv_lora_rank, "qk_rope_head_dim": args.qk_rope_head_dim}
    shapes: dict[llm.Shape, list[str]] = {}
    for path in llm.model_config_files(args.model_config or []) or [None]:
        models = shapes.setdefault(llm.shape_from(given, path), [])
        if path is not None:
            models.append(path)
    plans = [(models, shape, llm.select(llm.entries(shape), args.only)) for shape, models in shapes.items()]
    # The table's cells: (shape, row, target). With --shard, the builds are split, and the rows
    # skipped for the shape are split apart from them (each shard gets its share of the builds).
    table_cells = [(i, e, t) for i, (_, _, entries) in enumerate(plans) for e in entries for t in targets]
    builds = [c for c in table_cells if c[1].skip is None]
    if st.shard is not None:
        identity = lambda c: [plans[c[0]][1].as_dict(), c[1].name, c[2]]  # noqa: E731
        builds = _sharded(builds, st, sharded, "builds", identity)
        table_cells = builds + st.shard.take([c for c in table_cells if c[1].skip], identity)
    mine = {(i, e.name, t) for i, e, t in table_cells}
    todo = len(builds)
    bar = None
    if not st.quiet and err.is_terminal:   # a progress bar on a terminal only; nothing on a pipe or file
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
        )

        bar = Progress(TextColumn("[progress.description]{task.description}"), BarColumn(), MofNCompleteColumn(),
                       TimeElapsedColumn(), console=err, transient=True)
        task = bar.add_task("building", total=todo)
    say = (bar.console if bar is not None else err).print

    workers = Workers(min(st.jobs, max(todo, 1)), st.cluster)
    # Every cell is handed to the workers up front; `llm.run` reads them in table order.
    ahead = {(i, e.name, t): workers.submit(build_and_check, e.builder, e.params, t, st.options, bool(st.emit_dir),
                                            st.cache)
             for i, e, t in builds}
    plan = 0

    def check(entry: llm.Entry, target: str) -> list[KernelResult]:
        kernels, build_seconds, sources = ahead.pop((plan, entry.name, target)).result()
        if st.verbose:
            say(f"built {entry.name} for {target} in {build_seconds:.2f} s, analysed {len(kernels)} kernel(s) in "
                f"{sum(k.seconds for k in kernels):.2f} s{_cached(kernels)}", markup=False)
        if st.emit_dir:
            emitted.update(_emit(kernels, sources, st.emit_dir))
        return kernels

    skipped = {e.name for _, _, entries in plans for e in entries if e.skip}

    def progress(label: str, done: bool) -> None:
        if bar is None or label.rsplit(" [", 1)[0] in skipped:
            return
        if done:
            bar.advance(task)
        else:
            bar.update(task, description=escape(label))

    if bar is not None:
        bar.start()
    results: list[KernelResult] = []
    runs = []
    try:
        with workers:
            for plan, (models, shape, entries) in enumerate(plans):
                got, cells = llm.run(entries, targets, check, progress,
                                     lambda e, t: (plan, e.name, t) in mine)
                for c in cells:     # indices into this shape's results, then into the whole run's
                    c.results = [i + len(results) for i in c.results]
                results.extend(got)
                runs.append((models, shape, cells))
    finally:
        if bar is not None:
            bar.stop()
    return runs, targets, results


def _sharded(units: list, st: Settings, sharded: dict, what: str, identity) -> list:
    """With --shard, this shard's units (and `sharded` says which), else all of them."""
    if st.shard is None:
        return units
    mine = st.shard.take(units, identity)
    sharded.update(st.shard.describe(len(mine), len(units), what))
    return mine


def _job_identity(job: LintJob):
    return [job.builder, job.params, job.target]


def _jobs(args, cfg: Config) -> list[LintJob]:
    if args.command == "lint":
        targets = [t for t in args.target.split(",") if t]
        for t in targets:
            if t not in TARGETS:
                raise KernelraceError(f"unsupported target '{t}' (expected one of: {', '.join(TARGETS)})")
        params: dict[str, list] = {}
        for name, values in args.param:
            params.setdefault(name, []).extend(values)
        return lint_jobs(args.builder, targets, params)
    return [job for entry in cfg.lint for job in lint_jobs(entry.builder, entry.targets, entry.params)]


def _filter(results: list[KernelResult], st: Settings, known: set[str] | None,
            inline: suppressions.Inline | None = None):
    """Severity overrides, then suppressions (`kernelrace: ignore` comments, then the
    configuration's), then the baseline: what is left is reported."""
    hidden = {"suppressed": 0, "in_baseline": 0}
    out = []
    for r in results:
        kept = []
        for f in r.findings:
            if f.rule in st.severity:
                f.severity = st.severity[f.rule]
            if inline is not None and inline.suppresses(f, built=r.target is not None):
                hidden["suppressed"] += 1
            elif any(s.matches(f) for s in st.suppress):
                hidden["suppressed"] += 1
            elif known is not None and baseline.key(f) in known:
                hidden["in_baseline"] += 1
            else:
                kept.append(f)
        out.append(replace(r, findings=kept))
    return out, hidden


def _exit_status(results: list[KernelResult], fail_on: str) -> int:
    bar = SEVERITY_RANK[fail_on]
    failing = any(SEVERITY_RANK.get(f.severity, SEVERITY_RANK[ERROR]) >= bar for r in results for f in r.findings)
    return EXIT_FINDINGS if failing else EXIT_CLEAN


def _emit(results: list[KernelResult], sources: dict[str, str], emit_dir: str) -> dict[str, str]:
    try:
        return sarif.emit_sources(results, sources, emit_dir)
    except OSError as exc:
        raise KernelraceError(f"{emit_dir}: cannot write the emitted sources: {exc.strerror or exc}") from None


def _report(results, hidden, st: Settings, emitted: dict[str, str], invocation: dict, llm_table=None,
            shard: dict | None = None) -> None:
    if st.statistics:
        text = concise.render_statistics(results, as_json=st.format == "json")
    elif st.format == "concise":
        text = concise.render(results, hidden)
    elif st.format == "github":
        text = github.render(results, emitted)
    elif st.format == "json":
        text = report.to_json(results, hidden, verbose=st.verbose,
                              extra={"llm": llm_table} if llm_table is not None else None, shard=shard) + "\n"
    elif st.format == "sarif":
        text = sarif.dumps(sarif.to_sarif(results, emit=emitted, invocation=invocation))
    elif st.quiet >= 2:
        return
    elif st.output:
        buf = io.StringIO()
        # A file gets no colour and no terminal control codes, whatever stdout is.
        report.print_text(results, Console(file=buf, force_terminal=False, color_system=None, highlight=False,
                                           emoji=False, soft_wrap=True), quiet=bool(st.quiet), verbose=st.verbose, hidden=hidden,
                          llm=llm_table, shard=shard)
        text = buf.getvalue()
    else:
        report.print_text(results, Console(highlight=False, soft_wrap=True, emoji=False), quiet=bool(st.quiet),
                          verbose=st.verbose, hidden=hidden, llm=llm_table, shard=shard)
        return
    if st.output:
        try:
            Path(st.output).write_text(text, encoding="utf-8")
        except OSError as exc:
            raise KernelraceError(f"{st.output}: cannot write the report: {exc.strerror or exc}") from None
    else:
        sys.stdout.write(text)


# --- `kernelrace model` ----------------------------------------------------------------------------

def _model_parser(sub) -> None:
    mo = sub.add_parser("model", help="check every device kernel a compiled Relax model ships, on each target",
                        description="Lower a Relax model (MODULE:FUNCTION returning a Relax IRModule or an "
                                    "(nn.Module, export_tvm spec) pair, or a Hugging Face config.json, for which "
                                    "kernelrace writes its own reference decoder model) as MLC-LLM does, schedule each "
                                    "kernel with dlight's default rules in MLC's order, build it alone for each "
                                    "target in a worker process (a TVM crash is that kernel's `unknown`), check it "
                                    "and print a kernel x target table (docs/models.md).")
    mo.add_argument("spec", metavar="MODULE:FUNCTION|CONFIG.JSON")
    mo.add_argument("--target", default=",".join(TARGETS),
                    help=f"comma-separated targets (default: {','.join(TARGETS)})")
    mo.add_argument("--dtype", choices=("float16", "float32", "bfloat16"),
                    help="a config's weights and activations (default: float16, MLC's q0f16)")
    _run_options(mo)


def _model(args, st: Settings, err: Console, emitted: dict[str, str]):
    """`kernelrace model`: every kernel of the model on every target, in worker processes even with
    --jobs 1 (TVM's crashes stay in them)."""
    from analyzer.tvm_checks import model

    if st.shard is not None:
        raise KernelraceError("model: --shard is not supported (run one model per CI job)")
    targets = list(dict.fromkeys(_targets(args.target)))
    bar = task = None
    if not st.quiet and err.is_terminal:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        bar = Progress(TextColumn("[progress.description]{task.description}"), BarColumn(), MofNCompleteColumn(),
                       TimeElapsedColumn(), console=err, transient=True)
    say = (lambda line: (bar.console if bar is not None else err).print(line, markup=False)) if st.verbose else None

    def progress(label: str, total: int) -> None:
        nonlocal task
        if bar is None:
            return
        if task is None:
            task = bar.add_task("building", total=total)
        else:
            bar.advance(task)
        bar.update(task, description=escape(label))

    if bar is not None:
        bar.start()
    try:
        with Workers(st.jobs, st.cluster, isolate=True) as workers:
            out = model.run(args.spec, targets, st.options, workers, args.dtype, st.cache, bool(st.emit_dir),
                            say, progress)
    finally:
        if bar is not None:
            bar.stop()
    if st.emit_dir:
        emitted.update(_emit(out.results, out.sources, st.emit_dir))
    return out


if __name__ == "__main__":
    sys.exit(main())
