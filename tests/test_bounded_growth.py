"""Nothing grows exponentially with the number of branches or loops: a kernel with many
sequential branches and deep loop nests is analysed in bounded time, and its barrier-interval
graph stays linear in the program's size."""

import json
import subprocess
import sys
import time

import pytest

from analyzer.analysis.decision.memory_guard import KernelMemoryExceeded, MemoryGuard, checkpoint
from analyzer.analysis.execution.concurrency import build_cfg
from analyzer.frontend import lower_source
from analyzer.pipeline import Options, check_text

# Long: in the slow set, which .ci/run runs after the default run (pyproject.toml's markers).
pytestmark = pytest.mark.slow

BRANCHES = 64
NESTED = 16


def _kernel(branches: int, nested: int) -> str:
    lines = ['extern "C" __global__ void k(float* a, float* b, int m) {',
             "  int x = 0;",
             "  __shared__ float s[256];"]
    # Non-uniform branches with no barrier in them: each once doubled the frontier of the graph.
    lines += [f"  if ((threadIdx.x & {1 << (i % 8)}) != 0) {{ x = x + {i}; }}" for i in range(branches)]
    lines += ["  s[threadIdx.x] = a[threadIdx.x + x];", "  __syncthreads();"]
    for d in range(nested):
        lines.append("  " * (d + 1) + f"for (int i{d} = 0; i{d} < m; ++i{d}) {{")
    lines.append("  " * (nested + 1) + "b[threadIdx.x % 2] = s[(threadIdx.x + 1) % 256];")
    lines += ["  " * (d + 1) + "}" for d in reversed(range(nested))]
    lines.append("}")
    return "\n".join(lines)


def test_the_graph_is_linear_in_the_number_of_branches():
    sizes = []
    for branches in (16, 32, 64):
        (kernel,) = lower_source(_kernel(branches, 2), "cuda", "k.cu")
        cfg = build_cfg(kernel)
        sizes.append(sum(len(s) for s in cfg.succ.values()))
    # Twice the branches, about twice the edges (not 2**16 times).
    assert sizes[2] <= 2.5 * sizes[1] <= 2.5 * 2.5 * sizes[0], sizes


def test_many_branches_and_deep_loops_are_analysed_in_bounded_time():
    t0 = time.process_time()
    (result,) = check_text(_kernel(BRANCHES, NESTED), "cuda", "k.cu", (256,), None, {}, Options(), "k.cu")
    assert time.process_time() - t0 < 60
    # The read of s after the barrier is ordered; threads 0 and 2 store different values to b[0].
    assert [(f.rule, f.witness["replayed"]) for f in result.findings] == [("write-after-write", True)]


def test_the_memory_guard_stops_the_block_that_outgrows_it_at_a_checkpoint():
    hog = []
    with pytest.raises(KernelMemoryExceeded):
        with MemoryGuard(20):
            for _ in range(2000):     # 1 MB a step, slowly enough for the watcher to see it
                hog.append(bytearray(1 << 20))
                time.sleep(0.002)
                checkpoint()
    assert 20 <= len(hog) < 2000
    hog.clear()
    with MemoryGuard(20) as guard:     # a block that stays below the limit runs to its end
        small = bytearray(1 << 20)
        checkpoint()
    assert not guard.exceeded and len(small) == 1 << 20
    checkpoint()    # no guard, no stop


def test_a_kernel_over_its_memory_limit_is_unknown_and_not_cached(tmp_path):
    # A process of its own: a long test session's allocator has room to spare, so the kernel's
    # analysis might not grow it at all.
    path = tmp_path / "k.cu"
    path.write_text(_kernel(BRANCHES, 4))

    def check(*extra):
        run = subprocess.run([sys.executable, "-m", "analyzer.cli", "check", str(path), "--block-dim", "64",
                              "--format", "json", "--cache-dir", str(tmp_path / "cache"), *extra],
                             capture_output=True, text=True, timeout=600)
        assert run.returncode in (0, 1), run.stderr
        return json.loads(run.stdout)

    report = check("--kernel-memory", "1")
    (f,) = report["findings"]
    assert f["rule"] == "unknown" and "--kernel-memory" in f["message"] and report["kernels"][0]["status"] == "unknown"
    # Not kept in the cache: the next run, with the default limit, analyses it.
    report = check()
    assert report["kernels"][0]["status"] != "unknown" and not report["kernels"][0].get("cached")
