"""The documentation site (mkdocs.yml, docs/): `mkdocs build --strict` builds it with every
warning an error (a page missing from the nav, a broken link or anchor), as CI does through this
test; the rule pages it serves are the generated ones."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent


def _build(site: Path, config: Path = ROOT / "mkdocs.yml") -> subprocess.CompletedProcess:
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
    return subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--config-file", str(config),
                           "--site-dir", str(site)], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)


def test_the_site_builds_strictly(tmp_path):
    run = _build(tmp_path / "site")
    assert run.returncode == 0, run.stderr[-3000:]
    assert "WARNING" not in run.stderr
    from rules import RULES

    for name, rule in RULES.items():
        page = (tmp_path / "site" / "rules" / name / "index.html").read_text(encoding="utf-8")
        assert rule.summary.split()[0] in page
    # a link to a file of the repository outside docs/ goes to the repository's copy
    page = (tmp_path / "site" / "rules" / "barrier-scope" / "index.html").read_text(encoding="utf-8")
    assert 'href="https://github.com/kernelrace/kernelrace/blob/main/rules/barrier_scope.py"' in page


def test_a_broken_link_fails_the_build(tmp_path):
    """Strict means strict: a page that links to a missing page or anchor fails the build."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "index.md").write_text("# Home\n\nSee [nothing](missing.md) and [here](#nowhere).\n")
    config = {"site_name": "x", "docs_dir": str(docs), "nav": ["index.md"], "theme": {"name": "material"},
              "validation": {"unrecognized_links": "warn", "anchors": "warn"}}   # as mkdocs.yml has them
    (tmp_path / "mkdocs.yml").write_text(yaml.safe_dump(config))
    run = _build(tmp_path / "site", tmp_path / "mkdocs.yml")
    assert run.returncode != 0
    assert "missing.md" in run.stderr and "nowhere" in run.stderr
