"""Issue 41 item 7's front-end figure: parsing and lowering a 3,000-line CUDA file with host code
(100 copies of tests/clang/host_and_kernel.cu's kernels, 900 host functions) in under 2 s of CPU.

    python benchmarks/clang_large_file.py [--rounds 3] [--tree PATH ...]

Prints, per source tree (default: this checkout), the best and median CPU seconds over `--rounds`
fresh processes (libclang runs in a forked child, whose time counts too). Several trees are run
alternately, round by round, so that a loaded machine weighs on each alike; the suite checks only
that the file lowers (tests/test_clang_frontend.py), since a timed test fails on a busy machine.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

_CHILD = r"""
import json, resource, sys
sys.path.insert(0, sys.argv[1])
from pathlib import Path
from analyzer.frontend.clang import lower_clang

def cpu():
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime

body = Path(sys.argv[2]).read_text().split("int main")[0]
parts = [body.replace("shift", f"shift{i}").replace("copy", f"copy{i}").replace("#include", "// include")
         for i in range(100)]
host = "\n".join(f"void host{i}(float *a, float *b, int n) {{ for (int j = 0; j < n; ++j) a[j] = b[j] * {i}; }}"
                 for i in range(900))
text = "#include <cuda_runtime.h>\n" + "\n".join(parts) + "\n" + host
lower_clang("__global__ void k(float *a) { a[0] = 1; }", "cuda", "warm.cu")   # libclang loaded
start = cpu()
kernels, _ = lower_clang(text, "cuda", "big.cu")
print(json.dumps({"lines": text.count("\n"), "kernels": len(kernels), "cpu": cpu() - start}))
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--tree", type=Path, action="append", help="a kernelrace checkout (repeatable)")
    args = ap.parse_args()
    trees = args.tree or [ROOT]
    fixture = ROOT / "tests" / "clang" / "host_and_kernel.cu"
    times: dict[Path, list[float]] = {t: [] for t in trees}
    for _ in range(args.rounds):
        for tree in trees:
            out = subprocess.run([sys.executable, "-c", _CHILD, str(tree), str(fixture)], capture_output=True,
                                 text=True, check=True, cwd=tree)
            row = json.loads(out.stdout.strip().splitlines()[-1])
            times[tree].append(row["cpu"])
    for tree, ts in times.items():
        print(f"{tree}: {row['lines']} lines, {row['kernels']} kernels; CPU best {min(ts):.2f} s, "
              f"median {statistics.median(ts):.2f} s ({len(ts)} rounds)")


if __name__ == "__main__":
    main()
