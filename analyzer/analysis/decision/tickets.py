"""What the solver states of fetch-and-add results (frontend/atomics.py's tickets), for two threads.

- A ticket of a constant step s (`ticketN`, `ticketNxS`): two draws at one site from one element
  (two threads', or one thread's in two iterations) receive values at least s apart.
- A range ticket (`ticketNr`, a fetch-add of an unsigned amount the IR computes) and, on a counter
  a range ticket also moves, a constant step's: a counter that only grows (`ir.ticket_holds`: every
  atomic write that may reach the element an increment or a grow, a counter never wrapping around)
  hands out each draw r of amount n the range [r, r + n) before or after every other draw's:
  `r1 + n1 <= r2` or `r2 + n2 <= r1`, where both amounts are non-negative (the IR's value of an
  amount that underflows, `hi - lo` with `hi < lo`, is not what a u32 adds: then nothing is said).
  Two draws are distinct when their threads differ, their sites do, or their iterations of the
  loops around the site do (a draw is named by those, `ir.draw_loops`, wherever its result is
  read); any two sites of one element count, so `atomicAdd(&n, 3u)` and `atomicAdd(&n, count)`
  part too.

Between blocks, draws from a grid-wide counter (`gticket`) are apart; a block's counter (shared
memory, or a block-scoped atomic) is each block's own. The replay (witness/replay.py) checks the
same of the draws a witness's threads make.
"""

from __future__ import annotations

import re

import z3

from analyzer import ir
from analyzer.analysis.decision.z3_terms import as_int

DIMS = ("x", "y", "z")
# `ticket12`, `gticket12x4`, `ticket12r` (ir.ticket_name)
NAME = re.compile(r"g?ticket(?P<site>\d+)(?:x(?P<step>\d+)|(?P<range>r))?$")


def range_draw(kernel: ir.Kernel, name: str) -> ir.Opaque | None:
    """The draw `name` names where it takes part in the range facts: a range ticket, or a
    constant step's ticket, drawn from an element only increments and grows move."""
    o = ir.ticket_draws(kernel).get(name)
    if o is None or o.fetch is None or ir.atomic_op_of(kernel, o.fetch) not in ir.GROWS or not ir.ticket_holds(kernel, o):
        return None
    if o.amount is None and "grow" not in ir.atomic_writes_at(kernel, o.fetch):
        return None   # constant steps alone: the same-site fact says all there is
    return o


def amount(o: ir.Opaque, args: list):
    """A draw's amount, from its term's arguments (offset[, amount], iterations...)."""
    return args[1] if o.amount is not None else o.step


class Tickets:
    """Part of solver.Encoder: uses its `kernel`, `grid`, `tid`, `bid`, `bid2` and `base`."""

    def _ticket(self, name: str, k: int, args: list, out) -> None:
        """A fetch-and-add's result (ir.Opaque.ticket): two different threads fetching at the
        same site from the same address (the first argument) in the same iterations receive
        different values; from a grid-wide counter (`gticket`), so do threads of two blocks."""
        m = NAME.match(name)
        if m is None:
            return
        if m.group("range") is None:
            self._same_site(name, k, args, out)
        o = range_draw(self.kernel, name)
        if o is not None:
            self._ranges(name, o, k, args, out)

    def _differ(self, blocks: bool):
        """The two threads differ (in the block, or with `blocks` in the grid too)."""
        return z3.Or([self.tid[1][d] != self.tid[2][d] for d in DIMS]
                     + ([self.bid[d] != self.bid2[d] for d in DIMS] if blocks else []))

    def _distinct(self, blocks: bool, iters, other_iters):
        """Two draws at one site are two draws: their threads differ, or their iterations of the
        loops around the site do (`ir.draw_loops`: a draw is named by those wherever it is read).
        A block's counter (without `blocks`, in a grid) is shared by one block's threads only."""
        differ = z3.Or(self._differ(blocks), *[as_int(a) != as_int(b) for a, b in zip(iters, other_iters)])
        return z3.And(differ, self._one_block()) if self.grid and not blocks else differ

    def _one_block(self):
        return z3.And([self.bid[d] == self.bid2[d] for d in DIMS])

    def _same_site(self, name: str, k: int, args: list, out) -> None:
        seen = self.__dict__.setdefault("_tickets", {}).setdefault(name, {1: [], 2: []})
        blocks = self.grid and name.startswith("gticket")
        step = int(name.rpartition("x")[2]) if "x" in name else 1   # the later draw sees the earlier's add
        for other_args, other in seen[3 - k]:
            differ = self._distinct(blocks, args[1:], other_args[1:])
            same = as_int(args[0]) == as_int(other_args[0])
            apart = out != other if step == 1 else z3.Or(out - other >= step, other - out >= step)
            self.base.append(z3.Implies(z3.And(differ, same), apart))
        seen[k].append((args, out))

    def _ranges(self, name: str, o: ir.Opaque, k: int, args: list, out) -> None:
        seen = self.__dict__.setdefault("_range_draws", {}).setdefault(o.fetch.buffer, {1: [], 2: []})
        n = amount(o, args)
        n = z3.IntVal(n) if isinstance(n, int) else as_int(n)
        for other_name, other_o, other_args, other in seen[3 - k]:
            if other_name == name and o.amount is None:
                continue   # one site's constant steps: `_same_site`
            m = amount(other_o, other_args)
            m = z3.IntVal(m) if isinstance(m, int) else as_int(m)
            blocks = self.grid and o.grid_counter and other_o.grid_counter
            cond = [as_int(args[0]) == as_int(other_args[0]), n >= 0, m >= 0]
            if other_name == name:   # one site's: two draws where threads or iterations differ
                skip = 2 if o.amount is not None else 1
                cond.append(self._distinct(blocks, args[skip:], other_args[skip:]))
            elif self.grid and not blocks:   # a block's counter: the two threads share it in one block
                cond.append(self._one_block())
            self.base.append(z3.Implies(z3.And(cond), z3.Or(out + n <= other, other + m <= out)))
        seen[k].append((name, o, args, out))
