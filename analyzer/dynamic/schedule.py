"""Which thread runs next: threads run one at a time, each up to its next barrier, in a chosen
order; a barrier releases its threads once every thread still running waits at one (a warp
barrier once every running thread of the warp does).

Orders: `ascending`, `descending`, `random` (seeded), and a witness's: its two threads first, in
the order that loses (the one whose access the finding says lands first runs first; when they are
in different warps, with the rest of its warp, so that a warp barrier lets it run ahead), then the
rest ascending; `reverse` of any order is the order backwards.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

import numpy as np

from analyzer import ir
from analyzer.dynamic.detector import Detector
from analyzer.dynamic.interpreter import DIMS, RUN_STEPS, Interpreter, Launch
from analyzer.dynamic.values import InterpretError

ORDERS = ("ascending", "descending", "random", "witness")


def linear(tid, block_dim: dict[str, int]) -> int:
    x, y, z = (list(tid) + [0, 0, 0])[:3]
    return x + block_dim["x"] * (y + block_dim["y"] * z)


def order(name: str, launch: Launch, seed: int = 0, first: tuple = ()) -> list[int]:
    """The thread order `name` gives (linear indices). `first`: threads that run before the rest,
    in that order (a witness's)."""
    n = launch.threads
    base = list(range(n))
    if name == "descending":
        base.reverse()
    elif name == "random":
        random.Random(seed).shuffle(base)
    lead = [linear(t, launch.block_dim) for t in first]
    lead = [i for k, i in enumerate(lead) if i < n and i not in lead[:k]]
    return lead + [i for i in base if i not in set(lead)]


@dataclass
class Run:
    """The outcome of one run: the global memory it wrote, and the races it saw."""
    memory: dict[str, dict[int, object]]
    written: dict[str, set[int]]
    races: list
    steps: int
    # (block, thread) of each thread that accessed outside a buffer's declared shape or fixed
    # size (Interpreter.left): its races are the static `out-of-bounds` finding's, not races.
    left: frozenset = frozenset()

    def in_bounds(self, race) -> bool:
        """Neither thread of `race` left its buffers in this run."""
        return not {(race.block, race.first.thread), (race.block, race.second.thread)} & self.left


def run(kernel: ir.Kernel, launch: Launch, thread_order: list[int], blocks: list[tuple[int, int, int]],
        detect: bool = True, lockstep: bool = False, detector: Detector | None = None,
        run_steps: int = RUN_STEPS) -> Run:
    """The kernel run for each block of `blocks` in turn (sharing global memory), threads in
    `thread_order`, each up to its next barrier or, in `lockstep`, one statement at a time (all
    threads of the block advance together, in that order within a step). `detector`: the one to
    use (a Detector otherwise, when `detect`); `run_steps`: the statements the whole run may take.
    InterpretError when it cannot be run."""
    if launch.threads > 1024:
        raise InterpretError(f"a block of {launch.threads} threads (at most 1024)")
    if detector is None and detect:
        detector = Detector()
    interp = Interpreter(kernel, launch, detector.observe if detector else None, lockstep, run_steps)
    with np.errstate(all="ignore"):   # float overflow and NaN are values here, as on the device
        try:
            for bid in blocks:
                _run_block(interp, dict(zip(DIMS, bid)), thread_order)
        except (ArithmeticError, TypeError, ValueError, KeyError, IndexError) as exc:
            # a value of a kind the interpreter has no rule for (a vector where a scalar goes)
            raise InterpretError(f"{type(exc).__name__}: {exc}") from None
    shared = {b for b, buf in kernel.buffers.items() if buf.space != ir.GLOBAL}
    return Run({b: m for b, m in interp.memory.items() if b not in shared},
               {b: w for b, w in interp.written.items() if b not in shared},
               list(detector.races.values()) if detector else [], interp.steps, frozenset(interp.left))


_READY, _DONE = "ready", "done"


def _run_block(interp: Interpreter, bid: dict[str, int], thread_order: list[int]) -> None:
    for b in [b for b, buf in interp.kernel.buffers.items() if buf.space == ir.SHARED]:
        interp.memory.pop(b, None)     # each block has its own shared memory
    threads = {i: interp.thread(i, bid) for i in thread_order}
    gens = {i: interp.run(t) for i, t in threads.items()}
    state = {i: _READY for i in thread_order}
    members: dict[int, list[int]] = {}
    for i in thread_order:
        members.setdefault(threads[i].warp, []).append(i)
    while True:
        # One pass over the order; a warp whose threads all reach a warp barrier goes on at once
        # (the pass starts again from the front), so a warp can run ahead of the others.
        k = 0
        while k < len(thread_order):
            i = thread_order[k]
            k += 1
            if state[i] != _READY:
                continue
            try:
                state[i] = next(gens[i])
            except StopIteration:
                state[i] = _DONE
            if state[i] == ir.WARP:
                warp = [j for j in members[threads[i].warp] if state[j] != _DONE]
                if all(state[j] == ir.WARP for j in warp):
                    for j in warp:
                        state[j] = _READY
                    k = 0
        live = [i for i in thread_order if state[i] != _DONE]
        if not live:
            return
        stepping = [i for i in live if state[i] == "step"]
        for i in stepping:
            state[i] = _READY
        if stepping:
            continue
        released = False
        for warp in members.values():
            waiting = [i for i in warp if state[i] != _DONE]
            if waiting and all(state[i] == ir.WARP for i in waiting):
                for i in waiting:
                    state[i] = _READY
                released = True
        if released:
            continue
        # Every running thread waits: the block barrier releases them (threads that returned
        # early do not hold it, as on the GPUs the kernels are written for).
        for i in live:
            state[i] = _READY
