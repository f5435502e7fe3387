"""The same input gives byte-identical output whatever PYTHONHASHSEED and --jobs are.

A CI diff, a baseline that no longer matches or a result cache that flips would be the symptom of
anything that follows the iteration order of a set of strings, the addresses of objects, or the
process a kernel was analysed in. A slice of the fixtures, two or three files per dialect with
findings of every rule, is checked under three hash seeds, in one process and in two workers; the
reports must be the same bytes. Subprocesses: the hash seed is fixed when Python starts. The three
runs go two at a time (one per core): 13 s of CPU in all, about 10 s on two idle cores.
"""

import os
import subprocess
import sys

from conftest import FIXTURES, TESTS
import pytest

# Long: in the slow set, which .ci/run runs after the default run (pyproject.toml's markers).
pytestmark = pytest.mark.slow

SLICE = ["cuda/reduce_tree.cu", "cuda/grid_partials.cu", "cuda/matmul_tiled.cu", "cuda/preprocessor_macros.cu",
         "cuda/divergent_barrier.cu", "metal/simd_partials.metal", "metal/grid_stencil.metal",
         "metal/merge_state_barrier_scope.metal", "opencl/histogram.cl", "opencl/scan.cl",
         "vulkan/merge_state.comp", "vulkan/reduce_tree_opt.spvasm", "wgsl/loop_continuing.wgsl",
         "wgsl/histogram.wgsl"]
RUNS = [("1", "1"), ("2", "2"), ("3", "1")]     # (PYTHONHASHSEED, --jobs)


def _start(seed: str, jobs: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "analyzer.cli", "check", "--no-cache", "--no-config",
                             "--format", "json", "-j", jobs, *SLICE],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=FIXTURES,
                            env=os.environ | {"PYTHONHASHSEED": seed, "PYTHONPATH": str(TESTS.parent)})


def test_check_output_is_the_same_bytes_under_three_hash_seeds_and_two_job_counts():
    outs = []
    for batch in (RUNS[:2], RUNS[2:]):
        procs = [_start(seed, jobs) for seed, jobs in batch]
        for p in procs:
            out, err = p.communicate(timeout=300)
            assert p.returncode == 1, err.decode()
            outs.append(out)
    rules = {line.split('"')[3] for line in outs[0].decode().splitlines() if line.strip().startswith('"rule"')}
    assert {"read-after-write", "write-after-read", "write-after-write", "divergent-barrier",
            "barrier-scope"} <= rules, rules   # the slice exercises the rules
    assert outs[1] == outs[0] and outs[2] == outs[0]
