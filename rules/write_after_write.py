"""write-after-write: two threads may write different values to the same address, unordered.

## What it does
Finds two writes by different threads of the same block to the same address with no barrier
between them. When the solver proves both threads store the same value the pair is benign and is
reported only with `--strict` (GPUVerify's benign-write tolerance). Atomic updates do not race
with each other.

Between blocks: the same pair for two threads of *different* blocks on global (device, storage)
memory, in any iterations and either order (`--scope grid|all`). No barrier inside a kernel orders
two blocks, so the finding names both blocks, and its hint is an atomic for an accumulation
(split-K, per-row sums), or disjoint elements per block (`partial[blockIdx.x]`, a correct block-to-
tile map), never a barrier.

## Why is this bad?
Which value survives depends on scheduling, so the result is nondeterministic.

## Example
```cuda
out[blockIdx.x] = partial[tid];   // every thread writes its own partial sum to one element
```

Use instead:
```cuda
__syncthreads();
if (tid == 0) out[blockIdx.x] = total[0];
```

## References
- GPUVerify: A Verifier for GPU Kernels (OOPSLA 2012), benign write-write races.
"""

from analyzer.analysis.kernel import KernelAnalysis
from analyzer.analysis.pairing.races import WAW

NAME = WAW
SEVERITY = "error"
SUMMARY = "two threads may write the same address without a barrier between them"


def check(analysis: KernelAnalysis):
    return analysis.race_findings(NAME, SEVERITY)
