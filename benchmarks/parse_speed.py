"""Parse speed of the C-family front end on TVM's emitted CUDA and Metal (and the fixtures), before
and after a change: the method docs/benchmarks.md quotes.

    python benchmarks/parse_speed.py --emit DIR            # build TVM's files once (head_dim 128)
    python benchmarks/parse_speed.py --time DIR            # one process: CPU time of parsing them
    python benchmarks/parse_speed.py --compare DIR OLD NEW [--rounds 5]

`--compare` runs `--time` alternately in two source trees OLD and NEW (checkouts of the two commits;
this script is copied from NEW) for `--rounds` processes each, and prints each tree's best and
median CPU time of parsing, and of parsing and lowering. The files parsed are the same for both:
DIR's (TVM's CUDA and Metal for the LLM corpus builders at head_dim 128) and OLD's CUDA and Metal
fixtures.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def emit(out: Path) -> None:
    sys.path.insert(0, str(ROOT))
    from analyzer.tvm.build import build
    from analyzer.tvm.corpus import builders

    out.mkdir(parents=True, exist_ok=True)
    for target, suffix in (("cuda", ".cu"), ("metal", ".metal")):
        for i, (builder, params) in enumerate(builders(128)):
            for j, (_, text) in enumerate(build(builder, params, target).files()):
                (out / f"{i:02d}_{j}_{builder.rsplit(':', 1)[-1]}{suffix}").write_text(text)


def files(corpus: Path) -> list[Path]:
    out = sorted(p for p in corpus.iterdir() if p.suffix in (".cu", ".metal"))
    for d in ("cuda", "metal"):
        out += sorted(p for p in (corpus / "fixtures" / d).glob("*") if p.suffix in (".cu", ".metal"))
    return out


def time_parse(corpus: Path) -> dict:
    """CPU time of parsing every file, then of parsing and lowering it, in this process (each
    parser built, or loaded from Lark's cache, before the clock starts)."""
    sys.path.insert(0, str(Path.cwd()))
    from analyzer.frontend import lower_source
    from analyzer.frontend.parser import parse
    from analyzer.frontend.preprocess import preprocess

    paths = files(corpus)
    texts = [(p, p.read_text(), "cuda" if p.suffix == ".cu" else "metal") for p in paths]
    for dialect in ("cuda", "metal"):
        parse("__global__ void k(int *a) { a[0] = 1; }" if dialect == "cuda" else
              "kernel void k(device int *a) { a[0] = 1; }", dialect, "warm")
    t0 = time.process_time()
    for p, text, dialect in texts:
        pre = preprocess(text, dialect, str(p), None)
        parse(pre.text, dialect, str(p), pre.line_map)
    t1 = time.process_time()
    for p, text, dialect in texts:
        try:
            lower_source(text, dialect, str(p))
        except Exception:   # a fixture only the newer tree supports: lowered by neither in the sum
            pass
    t2 = time.process_time()
    return {"files": len(texts), "parse": t1 - t0, "parse_lower": t2 - t1}


def compare(corpus: Path, old: Path, new: Path, rounds: int) -> None:
    # The same fixtures for both trees: OLD's (which NEW parses too), copied next to TVM's files.
    shutil.rmtree(corpus / "fixtures", ignore_errors=True)
    for d in ("cuda", "metal"):
        shutil.copytree(old / "tests" / "fixtures" / d, corpus / "fixtures" / d)
    script = Path(__file__).resolve()
    runs: dict[str, list[dict]] = {"old": [], "new": []}
    for _ in range(rounds):
        for name, tree in (("old", old), ("new", new)):
            proc = subprocess.run([sys.executable, str(script), "--time", str(corpus)], cwd=tree,
                                  capture_output=True, text=True, check=True)
            runs[name].append(json.loads(proc.stdout))
    for name in ("old", "new"):
        rs = runs[name]
        p = [r["parse"] for r in rs]
        pl = [r["parse_lower"] for r in rs]
        print(f"{name}: {rs[0]['files']} files; parse best {min(p):.2f} s, median {statistics.median(p):.2f} s; "
              f"parse+lower best {min(pl):.2f} s, median {statistics.median(pl):.2f} s")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--emit", type=Path)
    ap.add_argument("--time", type=Path)
    ap.add_argument("--compare", type=Path, nargs=3, metavar=("DIR", "OLD", "NEW"))
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    if args.emit:
        emit(args.emit)
    elif args.time:
        print(json.dumps(time_parse(args.time)))
    elif args.compare:
        compare(*(p.resolve() for p in args.compare), args.rounds)
    else:
        ap.error("one of --emit, --time, --compare")


if __name__ == "__main__":
    main()
