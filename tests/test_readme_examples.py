"""README.md's example outputs are what the commands print today: each block between
`<!-- example: NAME -->` markers equals a fresh run (docs/regen_readme.py rewrites them).
In the slow set: the `llm` example builds 69 kernels for three targets (2 min 45 s on a loaded
2-core machine), the others take seconds."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "docs"))
import regen_readme  # noqa: E402

README = (ROOT / "README.md").read_text(encoding="utf-8")


def test_every_block_is_an_example_the_script_runs():
    found = regen_readme.blocks(README)
    assert set(found) == set(regen_readme.EXAMPLES)
    for name, body in found.items():
        assert body.startswith("```\n$ " + regen_readme.EXAMPLES[name].shown + "\n"), name


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(regen_readme.EXAMPLES))
def test_the_example_output_is_a_fresh_run(name):
    assert regen_readme.blocks(README)[name] == regen_readme.run(regen_readme.EXAMPLES[name]), \
        "stale: run `python docs/regen_readme.py`"
