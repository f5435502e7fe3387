"""write-after-read: another thread may overwrite a value before this thread has read it.

## What it does
Finds a read by one thread and a write to the same address by another thread of the same block,
with no barrier between them, where the read comes first in program order (including a read in
loop iteration k against a write in iteration k+1 of a loop with no barrier on the way around).

Between blocks: the same pair for two threads of *different* blocks on global (device, storage)
memory, in any iterations and either order (`--scope grid|all`). No barrier inside a kernel orders
two blocks, so the finding names both blocks, and its hint is an out-of-place buffer (an in-place
stencil whose halo a neighbouring block overwrites) or an atomic for an accumulation, never a
barrier.

## Why is this bad?
Threads of a block do not run in step. A thread that reaches the write early overwrites the value
before a slower thread reads it, and the slower thread computes with the new value. Within one
warp lockstep execution often hides this; once a block spans several warps it corrupts results.

## Example
```cuda
float s = S[row];            // every threadIdx.x of the row reads S[row]
V[row * D + tx] *= s;
S[row] = s * 2.0f;           // ... and every one writes it back
```

Use instead:
```cuda
float s = S[row];
V[row * D + tx] *= s;
__syncthreads();             // all reads of S[row] happen before any write
if (tx == 0) S[row] = s * 2.0f;
```

## References
- TVM `merge_state_inplace` fix (apache/tvm#20449).
"""

from analyzer.analysis.kernel import KernelAnalysis
from analyzer.analysis.pairing.races import WAR

NAME = WAR
SEVERITY = "error"
SUMMARY = "a write by one thread may land before another thread's read of the same address"


def check(analysis: KernelAnalysis):
    return analysis.race_findings(NAME, SEVERITY)
