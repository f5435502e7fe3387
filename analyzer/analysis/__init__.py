"""The analysis: everything between the kernel IR and the rules. Imports the IR and the shared
vocabulary only (and the interpreter, `dynamic/`, for pairs the solver cannot decide).

One kernel's analysis reads top to bottom through its rooms, each a package that says what it
decides:

- `execution/`: symbolic execution. `symbolic.py` runs the IR into access and barrier events
  (`events.py`; its terms in `terms.py`, uniformity in `uniformity.py`, loops' facts in `loop_facts.py`);
  `concurrency.py` builds the barrier-interval graph; `progress.py`, `tile_order.py` and
  `telescope.py` are facts of loop state and persistent kernels' walks; `atomic_order.py` and
  `unwritten.py` facts of atomics' results and of values no write can reach.
- `decision/`: the decision layer. `solver.py` encodes terms for Z3 (divisions in
  `division_encoding.py` and `floor_nest.py`, powers of two in `power_encoding.py` and
  `power_bits.py`, bitwise operations in `bitwise_lemmas.py`; TVM's spelled-out divisions read
  back by `division_forms.py`); `decide.py` is the one interface to the two procedures (integer
  sets through ISL for Presburger queries, their terms translated by `presburger.py`; Z3 for the
  rest); `solver_budget.py` asks within budgets, `queries.py` remembers verdicts;
  `memory_guard.py` stops an analysis that outgrows `--kernel-memory`.
- `pairing/`: which accesses collide. `races.py` is the race pass (`PairChecker`), with
  `pair_shapes.py` (which pairs), `addresses.py` and `disjoint.py` (apart without the solver),
  `collision_constraints.py` (the queries), `collision_causes.py` (what a collision needs),
  `pair_kinds.py` (which instance runs first, the hazard's kind),
  `out_of_bounds.py` (collisions that need an index outside), `hazards.py` (its results).
- `witness/`: `witnesses.py` reads a witness off a model, `replay.py` runs its two threads on
  concrete values, `walk_witness.py` and `walk_plan.py` unroll persistent kernels' walks,
  `observed.py` looks for an undecided pair's race in a run.
- `barriers/`: `barrier_passes.py` (barrier scope, redundant barriers) and `fixes.py` (fix hints,
  each re-checked).
- `interblock/`: races between blocks (`grid.py`) and the last-block pattern (`last_block.py`).
- `conditions/`: the condition of each race and the kernel's race-freedom condition.
- `stated/`: what the user states: launch and parameter assumptions, buffer contracts.

`kernel.py` runs them in order for one kernel and collects what the rules may read.
"""
