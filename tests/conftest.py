import io
import json
import multiprocessing
import os
import pickle
import shlex
import sys
import traceback
from concurrent.futures import ProcessPoolExecutor
from contextlib import redirect_stderr, redirect_stdout
from functools import partial
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


def cli_in_process(args) -> tuple[int, str, str]:
    """Run the CLI in this process, capturing its output: (exit status, stdout, stderr). For work
    handed to `map_in_processes`, where pytest's capsys is not there."""
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        try:
            code = main(list(args))
        except SystemExit as exc:   # argparse's exit on a bad argument, as the process would end
            code = exc.code if isinstance(exc.code, int) else 1
    return code, out.getvalue(), err.getvalue()


def map_in_processes(fn, items, jobs: int = min(2, os.cpu_count() or 1)) -> list:
    """`[fn(x) for x in items]`, in `jobs` processes forked from this one (the test's monkeypatches
    and environment go with them), results in order. For the tests that loop over a whole corpus
    (the hand-written kernels, the fixtures under the interpreter): the suite must fit its time on
    two cores, and pytest-xdist is not a dependency. `fn` is a module-level function (pickled by
    name); a worker that dies fails the test (BrokenProcessPool) rather than hanging it."""
    items = list(items)
    if jobs <= 1 or len(items) <= 1:
        return [fn(x) for x in items]
    with ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("fork")) as pool:
        return list(pool.map(fn, items))


def _returned_or_raised(fn, x):
    """fn(x), or the exception it raised (as a RuntimeError with its traceback if it does not
    pickle), to raise again in the test it belongs to."""
    try:
        return True, fn(*x)
    except Exception as exc:   # noqa: BLE001  (raised again in the case it belongs to)
        try:
            pickle.loads(pickle.dumps(exc))
            return False, exc
        except Exception:   # noqa: BLE001
            return False, RuntimeError(traceback.format_exc())


class Precomputed:
    """The results of `fn` over the parameters of a parametrized test's selected cases, computed
    in `map_in_processes` (both cores) when the first case runs; each case then asserts on its
    own result as if it had computed it (an exception raised for a case is raised in that case).
    A run of a few cases (`-k`) computes those only. Under pytest-xdist every worker collects every
    case, so such a test is one `xdist_group` (pyproject's `--dist loadgroup`): one worker computes
    its cases once, instead of each worker computing all of them for the share it runs."""

    def __init__(self, fn, argnames):
        self.fn, self.argnames, self.results = fn, argnames, None

    def __call__(self, request):
        if self.results is None:
            name = request.node.originalname
            cases = {item.callspec.id: tuple(item.callspec.params[a] for a in self.argnames)
                     for item in request.session.items
                     if item.module is request.module and item.originalname == name}
            got = map_in_processes(partial(_returned_or_raised, self.fn), list(cases.values()))
            self.results = dict(zip(cases, got))
        ok, value = self.results.pop(request.node.callspec.id)
        if not ok:
            raise value
        return value


def fixture_args(path: Path) -> list[str]:
    first = path.read_text().splitlines()[0]
    marker = "kernelrace-args:"
    return shlex.split(first.split(marker, 1)[1]) if marker in first else []


@pytest.fixture(autouse=True)
def _no_result_cache(tmp_path_factory, monkeypatch):
    """The result cache (analyzer/command/cache.py) is off in tests, so that a test running kernelrace twice
    (--jobs 1 against --jobs 2) analyses twice; tests/test_cache.py turns it on. Should it be on,
    it is an empty directory of the test's own, never the user's cache."""
    monkeypatch.setenv("KERNELRACE_NO_CACHE", "1")
    monkeypatch.setenv("KERNELRACE_CACHE_DIR", str(tmp_path_factory.mktemp("kernelrace-cache")))


@pytest.fixture(autouse=True)
def _one_worker_unless_asked(monkeypatch):
    """In-process runs default to one worker (`--jobs 1`): each run with more starts a pool whose
    fork server imports TVM and kernelrace again, seconds a run, which the configuration and report
    tests repeat dozens of times. The pool is the subject of its own tests (test_inputs_and_jobs,
    test_shards_and_cluster), which ask for `--jobs` explicitly; output is the same either way."""
    import analyzer.cli
    monkeypatch.setattr(analyzer.cli, "default_jobs", lambda: 1)


@pytest.fixture(scope="session", autouse=True)
def _no_result_cache_in_shared_fixtures(tmp_path_factory):
    """The same for module-scoped fixtures (test_llm's report, test_shards_and_cluster's sweep),
    which run before any test's own fixtures: without it they read and wrote the user's cache."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("KERNELRACE_NO_CACHE", "1")
        mp.setenv("KERNELRACE_CACHE_DIR", str(tmp_path_factory.mktemp("kernelrace-cache-shared")))
        yield


@pytest.fixture
def cli(capsys):
    return lambda *args: run_cli(list(args), capsys)
