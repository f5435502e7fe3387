"""Symbolic execution: one thread's run over the IR as terms, which access instances two threads may execute between the same barriers, and what loops and atomics tell of their values."""
