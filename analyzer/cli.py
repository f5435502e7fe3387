"""The `kernelrace` command line: `check` source files, `lint` TVM kernel builders."""

from __future__ import annotations

import argparse
import ast
import sys

from rich.console import Console

from . import report
from .errors import KernelraceError
from .build import TARGETS
from .findings import ERROR
from .pipeline import Options, check_file, lint_jobs, run_lint_job

EXIT_CLEAN, EXIT_FINDINGS, EXIT_BAD_INPUT = 0, 1, 2


class _Parser(argparse.ArgumentParser):
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


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="kernelrace", description="Static race analyzer for GPU kernels (CUDA, Metal).")
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)

    def common(sp):
        sp.add_argument("--format", choices=("text", "json"), default="text")
        sp.add_argument("--strict", action="store_true",
                        help="also report writes of provably equal values (benign write-write races)")
        sp.add_argument("--select", default="", help="comma-separated rule names to run (default: all)")
        sp.add_argument("--timeout", type=float, default=1.0, help="solver budget per query, in seconds of a typical machine (deterministic)")

    c = sub.add_parser("check", help="check CUDA (.cu, .cuh) or Metal (.metal) source files")
    c.add_argument("files", nargs="+", metavar="FILE")
    c.add_argument("--lang", choices=("cuda", "metal", "spirv"))
    c.add_argument("--block-dim", type=_dims, help="threads per block X[,Y[,Z]] (default: symbolic)")
    c.add_argument("--grid-dim", type=_dims, help="blocks per grid X[,Y[,Z]] (default: symbolic)")
    c.add_argument("--define", type=_define, action="append", default=[], metavar="NAME=INT",
                   help="bind a scalar kernel parameter")
    common(c)

    li = sub.add_parser("lint", help="build a TVM kernel builder and check every kernel it emits")
    li.add_argument("builder", metavar="MODULE:FUNCTION")
    li.add_argument("--target", default="cuda,metal", help="comma-separated targets: cuda, metal, vulkan")
    li.add_argument("--param", type=_param, action="append", default=[], metavar="NAME=VALUE[,VALUE...]",
                    help="builder parameter; several values build every combination")
    common(li)

    sub.add_parser("rules", help="list the rules")
    ex = sub.add_parser("explain", help="print a rule's documentation")
    ex.add_argument("rule")
    return p


def _options(args) -> Options:
    from rules import RULES

    select = tuple(s for s in args.select.split(",") if s)
    for s in select:
        if s not in RULES:
            raise KernelraceError(f"unknown rule '{s}' (known: {', '.join(RULES)})")
    return Options(strict=args.strict, timeout_ms=int(args.timeout * 1000), select=select)


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    out = Console(highlight=False, soft_wrap=True)
    err = Console(stderr=True, highlight=False, soft_wrap=True)
    try:
        return _run(args, out, err)
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


def _run(args, out: Console, err: Console) -> int:
    from rules import RULES

    if args.command == "rules":
        for r in RULES.values():
            out.print(f"{r.name:<20} {r.severity:<8} {r.summary}", markup=False)
        return EXIT_CLEAN
    if args.command == "explain":
        rule = RULES.get(args.rule)
        if rule is None:
            raise KernelraceError(f"unknown rule '{args.rule}' (known: {', '.join(RULES)})")
        out.print(rule.doc, markup=False)
        return EXIT_CLEAN
    options = _options(args)
    results = []
    if args.command == "check":
        defines = dict(args.define)
        for f in args.files:
            results.extend(check_file(f, args.lang, args.block_dim, args.grid_dim, defines, options))
    else:
        targets = [t for t in args.target.split(",") if t]
        for t in targets:
            if t not in TARGETS:
                raise KernelraceError(f"unsupported target '{t}' (expected cuda, metal or vulkan)")
        params: dict[str, list] = {}
        for name, values in args.param:
            params.setdefault(name, []).extend(values)
        jobs = lint_jobs(args.builder, targets, params)
        show_progress = args.format == "text" and err.is_terminal
        for job in jobs:
            if show_progress:
                err.print(f"building {job.builder} for {job.target} {job.params}", markup=False)
            kernels, _ = run_lint_job(job, options)
            results.extend(kernels)
    if args.format == "json":
        print(report.to_json(results))
    else:
        report.print_text(results, out)
    return EXIT_FINDINGS if any(f.severity == ERROR for r in results for f in r.findings) else EXIT_CLEAN


if __name__ == "__main__":
    sys.exit(main())
