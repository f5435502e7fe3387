"""Repository housekeeping: nothing binary or archived is committed (a stray wheel once was), and
every place that describes kernelrace names every dialect it reads."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
ARCHIVES = (".whl", ".egg", ".zip", ".tar", ".tgz", ".gz", ".bz2", ".xz", ".zst", ".7z", ".rar", ".jar")
BINARIES = (".so", ".dylib", ".dll", ".exe", ".o", ".a", ".pyc", ".pyd", ".bin", ".spv", ".png", ".jpg", ".pdf")
# The dialects, each with the words a description must use for it.
DIALECTS = {"CUDA": ["CUDA"], "Metal": ["Metal"], "OpenCL": ["OpenCL"],
            "Vulkan": ["Vulkan", "GLSL", "SPIR-V"], "WebGPU": ["WebGPU", "WGSL"]}


def _tracked() -> list[str]:
    out = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, text=True, check=True)
    return [p for p in out.stdout.split("\0") if p]


def test_no_binary_or_archive_is_committed():
    tracked = _tracked()
    assert len(tracked) > 100            # the listing worked
    by_name = [p for p in tracked if p.lower().endswith(ARCHIVES + BINARIES)]
    # by content too, as git tells text from binary: a NUL byte in the first 8000 bytes
    by_content = [p for p in tracked if (ROOT / p).is_file() and b"\0" in (ROOT / p).read_bytes()[:8000]]
    assert by_name == [] and by_content == []


def _texts() -> dict[str, str]:
    """Every description of kernelrace a user meets: the package's, the CLI's, the Action's, the
    pre-commit hook's, the documentation site's and the README's introduction."""
    import argparse

    if sys.version_info >= (3, 11):
        import tomllib
    else:
        import tomli as tomllib
    from analyzer.cli import DESCRIPTION, build_parser

    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    commands = {a.dest: a.help for a in sub._choices_actions}
    hooks = {h["id"]: h for h in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())}
    site = re.search(r"^site_description: (.*)$", (ROOT / "mkdocs.yml").read_text(), re.M).group(1)
    return {
        "pyproject.toml description": tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["description"],
        "kernelrace --help": DESCRIPTION,
        "kernelrace check's help": commands["check"],
        "action.yml description": yaml.safe_load((ROOT / "action.yml").read_text())["description"],
        "the kernelrace-check hook's description": hooks["kernelrace-check"]["description"],
        "mkdocs.yml site_description": site,
        "README.md's introduction": (ROOT / "README.md").read_text(encoding="utf-8").split("\n## ", 1)[0],
    }


TEXTS = _texts()


@pytest.mark.parametrize("where", sorted(TEXTS))
def test_every_description_names_every_dialect(where):
    text = TEXTS[where]
    missing = [word for words in DIALECTS.values() for word in words if not re.search(rf"\b{re.escape(word)}\b", text)]
    assert missing == [], f"{where}: {text!r}"
