"""The rule registry: one module per rule, sorted by name.

A rule module's docstring is its documentation (## What it does, ## Why is this bad?, ## Example,
Use instead:, ## References); `kernelrace explain RULE` prints it.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Callable

_MODULES = ("barrier_scope", "divergent_barrier", "out_of_bounds", "read_after_write", "redundant_barrier",
            "write_after_read",
            "write_after_write")


@dataclass(frozen=True)
class Rule:
    name: str
    severity: str
    summary: str
    check: Callable
    doc: str


def _load() -> dict[str, Rule]:
    rules = {}
    for mod_name in _MODULES:
        mod = importlib.import_module(f"{__name__}.{mod_name}")
        rules[mod.NAME] = Rule(mod.NAME, mod.SEVERITY, mod.SUMMARY, mod.check, mod.__doc__ or "")
    return dict(sorted(rules.items()))


RULES: dict[str, Rule] = _load()
