"""Race conditions against brute force: for random index expressions of one thread id and one
parameter, the condition race_condition.py computes must hold exactly where two distinct threads
of a block collide (enumerated over small parameters and block sizes); a condition said to be
only sufficient must hold nowhere they do not."""

import math
import random

import z3

from analyzer.analysis.conditions.race_condition import race_condition

PS = range(-5, 6)
BS = range(1, 7)


def _expr(rng: random.Random, depth: int):
    """(z3 term builder, python evaluator) of a random index expression in t and P."""
    pick = rng.randrange(7 if depth else 3)
    if pick == 0:
        return (lambda t, p: t), (lambda t, p: t)
    if pick == 1:
        return (lambda t, p: p), (lambda t, p: p)
    if pick == 2:
        c = rng.randint(-3, 3)
        return (lambda t, p: z3.IntVal(c)), (lambda t, p: c)
    (za, pa), (zb, pb) = _expr(rng, depth - 1), _expr(rng, depth - 1)
    if pick == 3:
        return (lambda t, p: za(t, p) + zb(t, p)), (lambda t, p: pa(t, p) + pb(t, p))
    if pick == 4:
        c = rng.randint(-3, 3)
        return (lambda t, p: c * za(t, p)), (lambda t, p: c * pa(t, p))
    if pick == 5:
        c = rng.randint(2, 4)
        return (lambda t, p: za(t, p) / c), (lambda t, p: pa(t, p) // c)   # Euclidean = floor for c > 0
    return (lambda t, p: t * p), (lambda t, p: t * p)                        # a thread value times P


def _races(f, p: int, b: int) -> bool:
    seen = {}
    for t in range(b):
        v = f(t, p)
        if v in seen:
            return True
        seen[v] = t
    return False


def _holds(text: str, p: int, b: int) -> bool:
    env = {"P": p, "B": b, "floord": lambda a, c: math.floor(a / c), "min": min, "max": max}
    return bool(eval(text.replace("blockDim.x", "B").replace("&&", " and ").replace("||", " or "), env))


def test_conditions_match_brute_force():
    rng = random.Random(20261206)
    checked = exact = 0
    for _ in range(400):
        z, f = _expr(rng, 3)
        t1, t2, P, B = z3.Int("t1"), z3.Int("t2"), z3.Int("P"), z3.Int("blockDim.x")
        domain = [B >= 1, B <= 6, P >= -5, P <= 5]
        cs = [t1 >= 0, t1 < B, t2 >= 0, t2 < B, t1 != t2, z(t1, P) == z(t2, P)] + domain
        s = z3.Solver()
        s.add(*cs)
        if s.check() != z3.sat:
            assert not any(_races(f, p, b) for p in PS for b in BS)
            continue
        m = s.model()
        c = race_condition(cs, domain, ["P", "blockDim.x"],
                           {"P": m.eval(P).as_long(), "blockDim.x": m.eval(B).as_long()})
        if c.how == "witness":
            continue
        checked += 1
        text = "True" if c.text == "true" else c.text
        for p in PS:
            for b in BS:
                want, got = _races(f, p, b), _holds(text, p, b)
                if c.exact:
                    assert want == got, (c.text, p, b)
                else:
                    assert want or not got, (c.text, p, b)
        exact += c.exact
    assert checked >= 250 and exact >= 200, (checked, exact)   # 330 and 308 at this seed
