"""Python's cycle collector paused over work that allocates much and makes few cycles.

A process that built kernels with TVM holds hundreds of thousands of objects (TVM's FFI objects,
its modules). Parsing and lowering a file allocates millions of short-lived ones (tokens, tree
nodes, IR), and every few thousand allocations the collector runs; the older generations it
reaches then walk the whole heap, TVM's objects included: in `kernelrace lint` and `llm`, and in
benchmarks/build_vs_analysis.py, a fifth of the time spent parsing and lowering (the corpus at
head_dim 128 on three targets: 5.5 s with the collector, 4.4 to 4.6 s paused). Trees and tokens
are freed by reference counting; the few cycles wait for the young generation's collection at the
end, which walks only what was made while paused.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def cycles_collected_after() -> Iterator[None]:
    """No cyclic collection inside; the young generation collected on the way out (when the
    collector was on before: a caller that turned it off keeps it off)."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if collecting:
            gc.enable()
            gc.collect(0)
