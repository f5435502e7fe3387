"""Witnesses: a hazard's concrete threads, iterations and values, read off a model, replayed on concrete values, and looked for in a run when the solver cannot decide."""
