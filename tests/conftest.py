import json
import shlex
import sys
from pathlib import Path

import pytest

from analyzer.cli import main

TESTS = Path(__file__).parent
FIXTURES = TESTS / "fixtures"
# Test builders (tests/builders) are imported by `kernelrace lint` as a user's would be.
sys.path.insert(0, str(TESTS))


_BUILDS: dict = {}


def built(spec, params, target):
    """A TVM build, once per session (the corpus tests check the same builds several ways)."""
    from analyzer.tvm.build import build

    key = (spec, repr(sorted(params.items())), target)
    if key not in _BUILDS:
        _BUILDS[key] = build(spec, params, target)
    return _BUILDS[key]


def run_cli(args, capsys):
    """Run the CLI in-process; return (exit status, parsed JSON or stdout text, stderr)."""
    code = main(list(args))
    out = capsys.readouterr()
    if "--format" in args and args[args.index("--format") + 1] == "json" and code != 2:
        return code, json.loads(out.out), out.err
    return code, out.out, out.err


def fixture_args(path: Path) -> list[str]:
    first = path.read_text().splitlines()[0]
    marker = "kernelrace-args:"
    return shlex.split(first.split(marker, 1)[1]) if marker in first else []


@pytest.fixture(autouse=True)
def _no_result_cache(tmp_path_factory, monkeypatch):
    """The result cache (analyzer/cache.py) is off in tests, so that a test running kernelrace twice
    (--jobs 1 against --jobs 2) analyses twice; tests/test_cache.py turns it on. Should it be on,
    it is an empty directory of the test's own, never the user's cache."""
    monkeypatch.setenv("KERNELRACE_NO_CACHE", "1")
    monkeypatch.setenv("KERNELRACE_CACHE_DIR", str(tmp_path_factory.mktemp("kernelrace-cache")))


@pytest.fixture
def cli(capsys):
    return lambda *args: run_cli(list(args), capsys)
