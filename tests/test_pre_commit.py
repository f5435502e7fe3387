"""The pre-commit hooks (.pre-commit-hooks.yaml) run by pre-commit itself, as a user's repository
runs them: `pre-commit try-repo THIS_REPOSITORY HOOK --all-files` in a scratch git repository.
pre-commit clones this repository (with the working tree's changes), makes the hook's virtualenv,
pip-installs the clone into it (a real, non-editable install), selects the files by the hook's
pattern and runs the hook's entry on them.

The hook environment sees this environment's packages (VIRTUALENV_SYSTEM_SITE_PACKAGES, and pip's
PIP_NO_DEPS / PIP_NO_BUILD_ISOLATION): the dependencies (TVM, Z3, libclang, ... about 600 MB) are
not downloaded again, as test_packaging.py installs the wheel; everything else is pre-commit's own.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

from conftest import FIXTURES, TESTS

pytestmark = pytest.mark.slow

ROOT = TESTS.parent


@pytest.fixture(scope="module")
def scratch(tmp_path_factory):
    base = tmp_path_factory.mktemp("pre_commit")
    repo = base / "repo"
    (repo / "kernels").mkdir(parents=True)
    for rel in ("cuda/neighbour_shift.cu", "vulkan/reduce_tree.comp", "wgsl/reduce_tree_fixed.wgsl"):
        shutil.copy(FIXTURES / rel, repo / "kernels" / rel.split("/")[1])
    (repo / "notes.txt").write_text("not a kernel\n")
    shutil.copy(TESTS / "builders" / "grid_races.py", repo / "grid_races.py")
    (repo / "kernelrace.toml").write_text('[[lint]]\nbuilder = "grid_races:tiles"\ntargets = ["cuda"]\n'
                                          'params = { overlap = 0 }\n')
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env |= {"PRE_COMMIT_HOME": str(base / "pre-commit-home"), "VIRTUALENV_SYSTEM_SITE_PACKAGES": "1",
            "PIP_NO_DEPS": "1", "PIP_NO_BUILD_ISOLATION": "1", "KERNELRACE_NO_CACHE": "1",
            "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t",
            "GIT_COMMITTER_EMAIL": "t@example.com"}
    for cmd in (["git", "init", "-q"], ["git", "add", "-A"], ["git", "commit", "-qm", "kernels"]):
        subprocess.run(cmd, cwd=repo, env=env, check=True, capture_output=True)
    return repo, env


def try_repo(scratch, hook: str) -> subprocess.CompletedProcess:
    repo, env = scratch
    return subprocess.run([sys.executable, "-m", "pre_commit", "try-repo", str(ROOT), hook, "--all-files",
                           "--verbose"], cwd=repo, env=env, capture_output=True, text=True, timeout=900)


def test_the_check_hook_fails_on_the_racy_kernels_at_the_users_lines(scratch):
    got = try_repo(scratch, "kernelrace-check")
    out = got.stdout + got.stderr
    assert got.returncode == 1, out
    assert "kernelrace check (CUDA, Metal, OpenCL, SPIR-V, GLSL, WGSL sources)" in out and "Failed" in out
    assert "kernels/neighbour_shift.cu:8:23: error[read-after-write]" in out
    assert "kernels/reduce_tree.comp:15: error[read-after-write]" in out     # the GLSL line, not the SPIR-V's
    assert "notes.txt" not in out and "grid_races.py" not in out             # the hook's file pattern


def test_the_builder_hook_lints_the_configured_builders(scratch):
    got = try_repo(scratch, "kernelrace")
    out = got.stdout + got.stderr
    assert got.returncode == 0, out
    assert "kernelrace (configured kernel builders)" in out and "Passed" in out
    assert "1 kernel(s): 1 clean" in out
