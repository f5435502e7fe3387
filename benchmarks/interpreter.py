"""Speed of the IR interpreter (analyzer/dynamic/): statements per second on a 1024-thread block,
`kernelrace confirm` on the seed builder (one row, and 64 rows with --blocks 64), and the dynamic
oracle over every fixture (static analysis included), each timed once:

    python benchmarks/interpreter.py [--rows 64]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from analyzer.dynamic import schedule  # noqa: E402
from analyzer.dynamic.launch import make_launch  # noqa: E402
from analyzer.frontend import lower_source  # noqa: E402

SEED = "tvm.relax.frontend.nn.llm._decode_kernels:_merge_state_inplace"
LOOP = """extern "C" __global__ void k(float* a, int n) {
    __shared__ float s[1024];
    s[threadIdx.x] = a[threadIdx.x];
    __syncthreads();
    float acc = 0.0f;
    for (int i = 0; i < n; ++i) acc += s[(threadIdx.x + i) % 1024];
    a[threadIdx.x] = acc; }"""


def block_of_1024(n: int) -> None:
    k = lower_source(LOOP, "cuda", "loop.cu")[0]
    k.block_dim, k.grid_dim = {"x": 1024, "y": 1, "z": 1}, {"x": 1, "y": 1, "z": 1}
    launch = make_launch(k, {"n": n})
    t0 = time.perf_counter()
    run = schedule.run(k, launch, schedule.order("random", launch, 1), [(0, 0, 0)])
    dt = time.perf_counter() - t0
    print(f"1024 threads, loop of {n}: {run.steps:,} statements in {dt:.2f} s ({run.steps / dt:,.0f}/s)")


def seed(rows: int) -> None:
    from analyzer.cli import main

    for n in (1, rows):
        t0 = time.perf_counter()
        main(["confirm", SEED, "--param", "num_heads=8", "--param", "head_dim=256", "--param", "v_dtype=float32",
              "--scalar", "D=256", "--scalar", "H=8", "--scalar", f"N={n}", "--blocks", str(n), "--no-cache", "-qq"])
        print(f"confirm on the seed builder, {n} row(s) of 8 heads: {time.perf_counter() - t0:.1f} s (build included)")


def oracle() -> None:
    from conftest import FIXTURES, fixture_args
    from dynamic_oracle import fixture_outcomes

    files = sorted(p for p in FIXTURES.rglob("*") if p.suffix in (".cu", ".metal", ".comp", ".spvasm", ".wgsl"))
    t0 = time.perf_counter()
    outs = [o for p in files for o in fixture_outcomes(p, fixture_args(p))]
    print(f"oracle over {len(files)} fixture files ({len(outs)} kernels): {time.perf_counter() - t0:.1f} s")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=64)
    a = ap.parse_args()
    block_of_1024(16)
    block_of_1024(64)
    seed(a.rows)
    oracle()
