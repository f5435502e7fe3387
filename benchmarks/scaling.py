"""How analysis time grows with kernel size: synthetic CUDA kernels of 1x, 2x, 4x ... one block.

The block is what TVM's attention kernels do over and over: load a tile into shared memory, a
barrier, read a neighbour's element, a barrier. Kernels of N blocks have N times the lines,
accesses and barriers. Each is parsed, lowered and analysed in this process, one after the other;
the last line is the growth exponent (slope of log time over log size: 1.0 is linear):

    python benchmarks/scaling.py [--blocks 8,16,32,64,128] [--repeat 3]
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from analyzer import ir  # noqa: E402
from analyzer.frontend import lower_source  # noqa: E402
from analyzer.pipeline import Options, analyse_kernel  # noqa: E402

BLOCK = """    tile[t] = in[(b * {n} + {i}) * 256 + t];
    __syncthreads();
    acc += tile[(t + {s}) % 256];
    __syncthreads();
"""


def kernel(blocks: int) -> str:
    body = "".join(BLOCK.format(n=blocks, i=i, s=1 + i % 7) for i in range(blocks))
    return ("extern \"C\" __global__ void grow(const float* __restrict__ in, float* __restrict__ out) {\n"
            "    __shared__ float tile[256];\n    unsigned int t = threadIdx.x, b = blockIdx.x;\n"
            "    float acc = 0.0f;\n" + body + "    out[b * 256 + t] = acc;\n}\n")


def measure(src: str, options: Options) -> tuple[float, int, int]:
    t0 = time.perf_counter()
    (k,) = lower_source(src, "cuda", "grow.cu")
    k.block_dim = {"x": 256, "y": 1, "z": 1}
    result = analyse_kernel(k, options)
    seconds = time.perf_counter() - t0
    assert result.status == "clean", [f.message for f in result.findings if f.severity != "note"]
    barriers = sum(isinstance(s, ir.Barrier) for s in ir.walk_stmts(k.body, into_loops=True))
    return seconds, len(src.splitlines()), barriers


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--blocks", default="8,16,32,64,128")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    options = Options(hints="off")
    rows = []
    print(f"{'blocks':>6} {'lines':>6} {'barriers':>8} {'seconds':>8} {'s/line (ms)':>11}")
    for n in [int(x) for x in args.blocks.split(",")]:
        src = kernel(n)
        runs = [measure(src, options) for _ in range(args.repeat)]
        seconds = statistics.median(r[0] for r in runs)
        _, lines, barriers = runs[0]
        rows.append((lines, seconds))
        print(f"{n:6d} {lines:6d} {barriers:8d} {seconds:8.2f} {1000 * seconds / lines:11.2f}", flush=True)
    xs = [math.log(x) for x, _ in rows]
    ys = [math.log(y) for _, y in rows]
    mx, my = statistics.mean(xs), statistics.mean(ys)
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)
    print(f"growth exponent (time ~ lines^k): k = {slope:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
