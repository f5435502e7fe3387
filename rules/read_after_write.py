"""read-after-write: a thread may read an address before or after another thread writes it.

## What it does
Finds a write by one thread and a read of the same address by another thread of the same block,
with no barrier between them, where the write comes first in program order (including a write in
loop iteration k against a read in iteration k+1).

Between blocks: the same pair for two threads of *different* blocks on global (device, storage)
memory, in any iterations and either order (`--scope grid|all`). No barrier inside a kernel orders
two blocks, so the finding names both blocks, and its hint is an atomic for an accumulation, or a
layout in which each block reads only what it wrote itself (or a second kernel launch), never a
barrier.

## Why is this bad?
Nothing makes the writer finish first: the reader sees either the old or the new value depending
on scheduling. This is the classic missing barrier between producing a tile in shared memory and
consuming it.

## Example
```cuda
sh[tid] = in[tid];
out[tid] = sh[(tid + 1) % N];    // may read the neighbour's element before it is written
```

Use instead:
```cuda
sh[tid] = in[tid];
__syncthreads();
out[tid] = sh[(tid + 1) % N];
```

## References
- CUDA C++ Programming Guide, "Shared Memory" and `__syncthreads()`.
"""

from analyzer.analysis.kernel import KernelAnalysis
from analyzer.analysis.pairing.races import RAW

NAME = RAW
SEVERITY = "error"
SUMMARY = "a read by one thread may happen before or after another thread's write of the same address"


def check(analysis: KernelAnalysis):
    return analysis.race_findings(NAME, SEVERITY)
