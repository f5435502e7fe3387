"""The analysis: everything between the kernel IR and the rules. Imports the IR and the shared
vocabulary only.

- `symbolic.py` runs the IR symbolically into access and barrier events.
- `concurrency.py` builds the barrier-interval graph and walks it.
- `addresses.py` (address algebra) and `disjoint.py` separate pairs without the solver.
- `solver.py` encodes symbolic terms for Z3 (its divisions in `division_encoding.py`, shifts'
  nested floors in `floor_nest.py`, term helpers in `z3_terms.py`; TVM's spelled-out divisions
  are read back by `division_forms.py`); `queries.py` remembers verdicts by query.
- `races.py` is the race pass (`PairChecker`), composed of: `pair_shapes.py` (which pairs),
  `collision_constraints.py` (the queries), `solver_budget.py` (budgets and the cache),
  `witnesses.py` (witness search and replay; `walk_witness.py` and `walk_plan.py` for persistent kernels' walks), `collision_causes.py` (what a collision needs),
  `barrier_passes.py` (barrier scope and redundant barriers), `progress.py` and `tile_order.py`
  (facts of loop state and of persistent kernels' walks; `telescope.py` their prefix sums in
  closed form); `hazards.py` holds its results.
- `replay.py` runs a witness's two threads on concrete values.
- `fixes.py` re-checks fix hints; `kernel.py` collects one kernel's results for the rules.
- `memory_guard.py` stops an analysis that outgrows `--kernel-memory` at its next checkpoint.
"""
