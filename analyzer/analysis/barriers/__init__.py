"""Barriers: the passes on demand after the race pass (barrier scope, divergence, redundancy) and the fix hints, each re-checked."""
