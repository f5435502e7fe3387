"""Every registered rule documents what it finds, why, an example, and the fix, and has a generated
page in docs/rules/ that matches its docstring."""

import importlib.util
from dataclasses import replace
from pathlib import Path

import pytest

from rules import RULES

ROOT = Path(__file__).resolve().parent.parent

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


# The rule pages in docs/rules/ are generated from the docstrings (python docs/generate.py), as ruff
# generates its rule docs; these fail when a committed page no longer matches its rule.


def _generator():
    spec = importlib.util.spec_from_file_location("docs_generate", ROOT / "docs" / "generate.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_generated_rule_pages_are_up_to_date():
    gen = _generator()
    stale = [path for path, text in gen.pages().items()
             if not (ROOT / path).is_file() or (ROOT / path).read_text(encoding="utf-8") != text]
    assert stale == [], f"stale or missing: {stale}; run `python docs/generate.py`"


def test_no_page_without_a_rule():
    gen = _generator()
    on_disk = {p.relative_to(ROOT).as_posix() for p in (ROOT / "docs" / "rules").glob("*.md")}
    assert on_disk - set(gen.pages()) == set(), "run `python docs/generate.py` (it deletes them)"


@pytest.mark.parametrize("name", sorted(RULES))
def test_every_rule_has_a_page_in_the_index(name):
    page = ROOT / "docs" / "rules" / f"{name}.md"
    assert page.is_file(), f"no {page.relative_to(ROOT)}; run `python docs/generate.py`"
    assert f"# {name}\n" in page.read_text(encoding="utf-8")
    index = (ROOT / "docs" / "rules" / "index.md").read_text(encoding="utf-8")
    assert f"]({name}.md)" in index


def test_the_generator_sees_a_changed_docstring():
    """The staleness check compares text, so an edited docstring makes its page stale."""
    gen = _generator()
    rule = RULES["write-after-write"]
    edited = {**RULES, rule.name: replace(rule, doc=rule.doc + "\nOne more line.\n")}
    assert gen.pages(edited)["docs/rules/write-after-write.md"] != gen.pages()["docs/rules/write-after-write.md"]
    assert gen.pages(edited)["docs/rules/barrier-scope.md"] == gen.pages()["docs/rules/barrier-scope.md"]
