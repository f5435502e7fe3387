"""divergent-barrier: a barrier that only some threads of a block (or, for a grid sync, some blocks) reach.

## What it does
Finds a block-level barrier (`__syncthreads()`, `threadgroup_barrier(...)`) reached under a
condition that is not uniform across the block: it depends on the thread index, lane or warp
index, or on a value derived from them (including values loaded at thread-dependent addresses,
and loops whose trip count differs between threads). Conditions on `blockIdx`, kernel scalars,
block sizes and values loaded at uniform addresses are uniform.

A grid sync (CUDA cooperative groups' `this_grid().sync()`) must be reached by every thread of
the grid: it is also divergent under a condition that may differ between blocks (on `blockIdx`,
on a value loaded from memory the kernel writes, on block-uniform loop state), in a loop whose
trip count differs between blocks, or after a `return` some blocks take. The witness names two
blocks, one reaching the sync and one not, in the same iterations of the loops around it.

## Why is this bad?
A barrier must be reached by all threads of the block or by none. Otherwise the behaviour is
undefined: the block deadlocks, or the barrier silently stops synchronising. A grid sync that some
blocks skip deadlocks the whole grid.

## Example
```cuda
if (threadIdx.x < 16) {
    buf[threadIdx.x] = x;
    __syncthreads();
}
```

Use instead:
```cuda
if (threadIdx.x < 16) buf[threadIdx.x] = x;
__syncthreads();
```

## References
- CUDA C++ Programming Guide: `__syncthreads()` is allowed in conditional code only if the
  conditional evaluates identically across the entire thread block.
- CUDA C++ Programming Guide, Cooperative Groups, Grid Synchronization: every thread of the grid
  must call `grid.sync()`.
"""

from analyzer import ir, messages
from analyzer.analysis.kernel import KernelAnalysis

NAME = "divergent-barrier"
SEVERITY = "error"
SUMMARY = "a barrier sits under a condition that differs between threads of a block (or blocks of a grid)"


def check(analysis: KernelAnalysis):
    out = []
    for ev in analysis.evaluation.barriers:
        if ev.barrier.scope == ir.WARP:
            continue
        if ev.divergent_because is not None:
            witness = analysis.divergence_witness(ev)
            cond_span, template = ev.divergent_span, messages.DIVERGENT_BARRIER
        elif ev.barrier.scope == ir.GRID and ev.grid_divergent_because is not None:
            witness = analysis.grid_divergence_witness(ev)
            cond_span = ev.grid_divergent_span
            template = messages.DIVERGENT_GRID_EXIT if ev.grid_divergent_exit else messages.DIVERGENT_GRID_BARRIER
            if witness is False and ev.grid_divergent_exit:
                # The guards agree in every iteration, but an early exit in some blocks is not among
                # them: reported without a witness rather than proved away.
                witness = None
        else:
            continue
        if witness is False:
            continue  # no two threads disagree: the condition is uniform after all
        span = ev.barrier.span
        text = analysis.kernel.line(span.line).strip()
        line = cond_span.line if cond_span else span.line
        msg = template.format(text=ev.barrier.text or text, line=line)
        loc = analysis.span_location(span, "barrier", text)
        cond_loc = None
        if cond_span is not None:
            cond_loc = analysis.span_location(cond_span, "condition")
        out.append(analysis.finding(NAME, SEVERITY, msg, loc, cond_loc, witness or None))
    return out
