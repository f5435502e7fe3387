"""The analysis: everything between the kernel IR and the rules.

`symbolic.py` runs the IR symbolically into access and barrier events; `concurrency.py` builds the
barrier-interval graph; `addresses.py` and `disjoint.py` separate pairs without the solver;
`solver.py` encodes what is left for Z3; `races.py` decides each pair and finds its witness,
`replay.py` replays the witness on concrete values; `fixes.py` re-checks fix hints; `kernel.py`
collects one kernel's results for the rules. Imports the IR and the shared vocabulary only.
"""
