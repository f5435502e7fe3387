"""The symbolic executor's own terms (symbolic.py), beside the IR's expressions: a loop's
iteration number and an uninterpreted value."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Iter:
    """The iteration number (from 0) of loop `loop` in the executing thread."""
    loop: int


@dataclass(frozen=True)
class Sym:
    """An uninterpreted function of `args`; shared by all threads when uniform, else per thread."""
    name: str
    uniform: bool
    args: tuple = ()
    # A value it never goes below: loop state that starts there and only ever grows.
    lower: int | None = None
    # Bounds by terms of the same thread, as (relation, term) pairs (atomic_order.py: a thread's
    # atomic result bounded by its earlier atomic of the element), which the solver states.
    after: tuple = ()
