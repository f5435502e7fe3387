"""Every registered rule documents what it finds, why, an example, and the fix."""

import pytest

from rules import RULES

HEADINGS = ("## What it does", "## Why is this bad?", "## Example", "Use instead:", "## References")


@pytest.mark.parametrize("name", sorted(RULES))
def test_rule_docstring_has_every_heading(name):
    doc = RULES[name].doc
    positions = [doc.find(h) for h in HEADINGS]
    assert all(p >= 0 for p in positions), [h for h, p in zip(HEADINGS, positions) if p < 0]
    assert positions == sorted(positions)


def test_registry_is_sorted_and_names_are_kebab_case():
    names = list(RULES)
    assert names == sorted(names)
    assert all(n == n.lower() and " " not in n and "_" not in n for n in names)
