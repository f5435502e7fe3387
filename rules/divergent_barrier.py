"""divergent-barrier: a barrier that only some threads of a block reach.

## What it does
Finds a block-level barrier (`__syncthreads()`, `threadgroup_barrier(...)`) reached under a
condition that is not uniform across the block: it depends on the thread index, lane or warp
index, or on a value derived from them (including values loaded at thread-dependent addresses,
and loops whose trip count differs between threads). Conditions on `blockIdx`, kernel scalars,
block sizes and values loaded at uniform addresses are uniform.

## Why is this bad?
A barrier must be reached by all threads of the block or by none. Otherwise the behaviour is
undefined: the block deadlocks, or the barrier silently stops synchronising.

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
"""

from analyzer import ir, messages
from analyzer.analysis.kernel import KernelAnalysis

NAME = "divergent-barrier"
SEVERITY = "error"
SUMMARY = "a barrier sits under a condition that differs between threads of a block"


def check(analysis: KernelAnalysis):
    out = []
    for ev in analysis.evaluation.barriers:
        if ev.barrier.scope != ir.BLOCK or ev.divergent_because is None:
            continue
        witness = analysis.divergence_witness(ev)
        if witness is False:
            continue  # no two threads of a block disagree: the condition is uniform after all
        span = ev.barrier.span
        text = analysis.kernel.line(span.line).strip()
        line = ev.divergent_span.line if ev.divergent_span else span.line
        msg = messages.DIVERGENT_BARRIER.format(text=ev.barrier.text or text, line=line)
        loc = analysis.span_location(span, "barrier", text)
        cond_loc = None
        if ev.divergent_span is not None:
            cond_loc = analysis.span_location(ev.divergent_span, "condition")
        out.append(analysis.finding(NAME, SEVERITY, msg, loc, cond_loc, witness or None))
    return out
