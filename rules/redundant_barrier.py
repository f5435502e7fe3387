"""redundant-barrier: a barrier whose removal lets no two threads' accesses collide.

## What it does
For each barrier, asks the race checker whether the kernel would race without it: every pair of
accesses (at least one a write) that the barrier alone keeps in separate barrier intervals is
queried in the interval shapes its removal creates, with the same solver query, launch extents and
loop reasoning as the race rules. The barrier is reported only when every such pair is proven
never to touch the same bytes from two threads (for every block, thread pair, loop iteration and
parameter value the kernel allows). If any pair collides, a pair already races with the barrier in
place, or the solver cannot decide, nothing is reported: the verdict must be one kernelrace can
defend. A grid sync (`this_grid().sync()`) is never reported: it also orders blocks, which the
checks of one block cannot judge.

## Why is this bad?
A block barrier stalls every thread of the block until the slowest arrives; in a loop that cost
is paid every iteration. A barrier nothing depends on is pure latency, and it hides the real
synchronisation structure from whoever edits the kernel next. This is a note, not a defect: the
barrier may be there on purpose (to keep a future edit safe, or to order memory for code
kernelrace does not see, such as another kernel's reads through the same buffer within a
cooperative launch).

## Example
```cuda
__shared__ float tile[256];
tile[threadIdx.x] = in[i];
__syncthreads();
out[i] = tile[threadIdx.x] * 2.0f;   // each thread reads only its own element
```

Use instead:
```cuda
__shared__ float tile[256];
tile[threadIdx.x] = in[i];
out[i] = tile[threadIdx.x] * 2.0f;   // no other thread's element is read: no barrier needed
```

## References
- CUDA C++ Programming Guide, "Synchronization Functions" (`__syncthreads`).
- Li and Gopalakrishnan, "Scalable SMT-based verification of GPU kernel functions" (FSE 2010),
  on barrier intervals; Betts et al., "GPUVerify" (OOPSLA 2012).
"""

from analyzer.analysis.kernel import KernelAnalysis

NAME = "redundant-barrier"
SEVERITY = "note"
SUMMARY = "a barrier whose removal introduces no race"


def check(analysis: KernelAnalysis):
    return analysis.redundant_barrier_findings(NAME, SEVERITY)
