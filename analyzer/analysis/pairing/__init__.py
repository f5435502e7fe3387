"""Pairing: which pairs of accesses can touch the same bytes with nothing ordering them (pair shapes, solver-free disjointness, address algebra, the pair checker, out-of-bounds collisions)."""
