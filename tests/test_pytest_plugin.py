"""The pytest plugin: `pytest --kernelrace` fails the tests whose TVM builds have races.

Each run is a separate pytest process (`runpytest_subprocess`), as a user's would be: its own TVM,
the plugin loaded with `-p analyzer.tvm_checks.pytest_plugin`."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

TESTS = Path(__file__).parent


def lit(text):
    """`text` as an fnmatch pattern matching itself (`error[write-after-read]` is not a class)."""
    return text.replace("[", "[[]")

# A user's test file: it builds kernels with TVM's own calls, knowing nothing of kernelrace.
USER_TESTS = '''
import pytest
import tvm
from builders.merge_state_fixed import merge_state_inplace_fixed
from tvm.relax.frontend.nn.llm._decode_kernels import _merge_state_inplace

PARAMS = dict(num_heads=8, head_dim=256, v_dtype="float16")


def cuda():
    return tvm.target.Target({"kind": "cuda", "arch": "sm_80"})


def test_seed():
    tvm.tirx.build(_merge_state_inplace(target=cuda(), **PARAMS), target=cuda())


def test_fixed():
    tvm.compile(merge_state_inplace_fixed(target=cuda(), **PARAMS), target=cuda())


@pytest.fixture
def seed_library():
    return tvm.tirx.build(_merge_state_inplace(target=cuda(), **PARAMS), target=cuda())


def test_seed_from_a_fixture(seed_library):
    pass


def test_seed_checked_by_the_test_itself():
    from analyzer.tvm_checks.hook import checking

    with checking("collect") as session:
        tvm.tirx.build(_merge_state_inplace(target=cuda(), **PARAMS), target=cuda())
    assert [f.rule for f in session.findings] == ["write-after-read"]
'''


@pytest.fixture
def user_tests(pytester, monkeypatch):
    """The user's test file in a fresh directory; `builders` (tests/builders) importable, as
    the repository's conftest makes it for the tests here."""
    root = str(TESTS.parent)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(TESTS), root, os.environ.get("PYTHONPATH", "")]))
    pytester.makepyfile(test_kernels=USER_TESTS)
    return pytester


@pytest.mark.slow   # a pytest run in a subprocess: the slow set
def test_kernelrace_fails_the_racy_tests_and_summarizes(user_tests):
    result = user_tests.runpytest_subprocess("-p", "analyzer.tvm_checks.pytest_plugin", "--kernelrace", "-rfE")
    result.assert_outcomes(passed=2, failed=1, errors=1)
    out = result.stdout.str()
    # the failure report is the finding as the text report prints it
    result.stdout.fnmatch_lines([
        "*_ test_seed _*",
        "kernelrace: GPU kernel(s) this test built have findings at or above error (--kernelrace-fail-on=error)",
        lit("merge_state_inplace.cu:149:3: error[write-after-read] write to S[0] (global) ") + "*"
        + lit("kernel merge_state_inplace_kernel [cuda]"),
        "*first: read S (global) at 134:18 (builder tvm/relax/frontend/nn/llm/_decode_kernels.py:497)",
        "*witness: block *",
    ])
    # a fixture's build fails the test at setup
    result.stdout.fnmatch_lines(["*ERROR at setup of test_seed_from_a_fixture*",
                                 "kernelrace: GPU kernel(s) this test built during setup have findings*"])
    # short summary lines carry the finding
    result.stdout.fnmatch_lines([lit("FAILED test_kernels.py::test_seed - kernelrace: error[write-after-read] in ")
                                 + "*"])
    # the session summary
    result.stdout.fnmatch_lines([
        "*= kernelrace =*",
        ("3 GPU kernel(s) built through TVM checked in 3 test(s): 1 clean, 2 with findings, 0 unknown; "
         "2 error(s), 0 warning(s)"),
        "2 test(s) failed by kernelrace (--kernelrace-fail-on=error):",
        lit("  test_kernels.py::test_seed: merge_state_inplace.cu:149:3: error[write-after-read] kernel "
            "merge_state_inplace_kernel [cuda]"),
        lit("  test_kernels.py::test_seed_from_a_fixture (setup): merge_state_inplace.cu:149:3: "
            "error[write-after-read] kernel merge_state_inplace_kernel [cuda]"),
    ])
    assert "test_fixed" not in out.split("short test summary info")[-1]
    assert result.ret == pytest.ExitCode.TESTS_FAILED


@pytest.mark.slow   # a pytest run in a subprocess: the slow set
def test_without_the_option_the_plugin_does_nothing(user_tests):
    result = user_tests.runpytest_subprocess("-p", "analyzer.tvm_checks.pytest_plugin")
    result.assert_outcomes(passed=4)
    assert "kernelrace" not in result.stdout.str()


def test_importing_the_plugin_is_cheap():
    code = ("import sys, analyzer.tvm_checks.pytest_plugin; "
            "heavy = [m for m in ('tvm', 'z3', 'lark', 'rich', 'analyzer.pipeline', 'analyzer.tvm_checks.hook') "
            "if m in sys.modules]; assert not heavy, heavy")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr


def test_loads_beside_its_installed_entry_point(pytester, monkeypatch, tmp_path):
    """With the `kernelrace` pytest11 entry point installed, `-p analyzer.tvm_checks.pytest_plugin` names the
    same module: pytest must neither fail ("Plugin already registered") nor load it twice (its
    options would be added twice)."""
    dist = tmp_path / "site" / "kernelrace_ep-0.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: kernelrace-ep\nVersion: 0\n")
    (dist / "entry_points.txt").write_text("[pytest11]\nkernelrace = analyzer.tvm_checks.pytest_plugin\n")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(dist.parent), str(TESTS.parent)]))
    for args in (["-p", "analyzer.tvm_checks.pytest_plugin"], [], ["-p", "kernelrace"]):
        result = pytester.runpytest_subprocess(*args, "--help")
        assert result.ret == 0, result.stderr.str()
        assert result.stdout.str().count("--kernelrace-fail-on={error,warning}") == 1
