"""The decision layer: the encodings of C and TIR integer arithmetic for the solver (division, powers of two, bitwise operations), Z3 and ISL queries within budgets, and their remembered verdicts."""
