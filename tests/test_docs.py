"""The README is a landing page and docs/ the reference: links resolve, paths exist, and the
README's set-up and test commands are the ones CI runs."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
README_LIMIT = 12_000

LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^```.*?^```", re.S | re.M)
# A path in backticks that names a file or folder of this repository.
REPO_PATH = re.compile(r"`((?:analyzer|rules|tests|benchmarks|grammars|docs|\.ci)/[\w./-]*)`")


def _ids(page: Path) -> list[str]:
    return [page.relative_to(ROOT).as_posix()]


def _anchors(page: Path) -> set[str]:
    """GitHub's heading anchors: lowercase, punctuation dropped, spaces to hyphens."""
    out = set()
    for line in FENCE.sub("", page.read_text(encoding="utf-8")).splitlines():
        m = re.match(r"#{1,6} (.+)", line)
        if m:
            out.add(re.sub(r"[^\w\- ]", "", m.group(1).strip().lower()).replace(" ", "-"))
    return out


def test_readme_is_a_landing_page():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(text) <= README_LIMIT, f"README.md has {len(text)} characters; move reference text to docs/"


def test_readme_set_up_and_test_commands_are_what_ci_runs():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Set up and test", 1)[1].split("\n## ", 1)[0]
    commands = [b.strip() for b in re.findall(r"^```\n(.*?)^```", section, re.S | re.M)]
    ci = [line for line in (ROOT / ".ci" / "run").read_text().splitlines() if line.startswith("python ")]
    assert commands == ci == ['python -m pip install -e ".[dev,opencl,cluster]"', "python -m pytest -q",
                              "python -m pytest -q -m slow"]


@pytest.mark.parametrize("page", PAGES, ids=_ids)
def test_relative_links_resolve(page):
    broken = []
    for target in LINK.findall(FENCE.sub("", page.read_text(encoding="utf-8"))):
        if re.match(r"[a-z]+:", target):
            continue  # http(s), mailto
        path, _, anchor = target.partition("#")
        dest = (page.parent / path).resolve() if path else page
        if not dest.exists():
            broken.append(target)
        elif anchor and dest.suffix == ".md" and anchor not in _anchors(dest):
            broken.append(target)
    assert broken == []


@pytest.mark.parametrize("page", PAGES, ids=_ids)
def test_paths_named_in_backticks_exist(page):
    text = page.read_text(encoding="utf-8")
    missing = sorted({p for p in REPO_PATH.findall(text) if not (ROOT / p.rstrip("/")).exists()})
    assert missing == []


@pytest.mark.parametrize("page", PAGES, ids=_ids)
def test_code_fences_are_closed(page):
    fences = [line for line in page.read_text(encoding="utf-8").splitlines() if line.lstrip().startswith("```")]
    assert len(fences) % 2 == 0
