"""The TVM build hook: kernels built with TVM's own calls (`tvm.tirx.build`, `tvm.compile`) are
checked while a `checking()` block or `install()` is active, and only then."""

import importlib
import subprocess
import sys

import pytest
import tvm
from builders.merge_state_fixed import merge_state_inplace_fixed
from tvm.relax.frontend.nn.llm._decode_kernels import _merge_state_inplace

from analyzer.findings import Finding, KernelResult, Location
from analyzer.pipeline import Options
from analyzer.tvm_checks import hook as tvm_hook
from analyzer.tvm_checks.hook import RaceError, checking

PARAMS = dict(num_heads=8, head_dim=256, v_dtype="float16")
PATCHED = ("split_host_device_mods", "tir_to_runtime", "codegen_build")
TVM_BUILD = importlib.import_module("tvm.tirx.build")
ORIGINALS = {name: getattr(TVM_BUILD, name) for name in PATCHED}


def cuda():
    return tvm.target.Target({"kind": "cuda", "arch": "sm_80"})


@pytest.fixture(scope="module")
def seed():
    """TVM's `_merge_state_inplace`, as a user's code would make it: a scheduled PrimFunc."""
    return _merge_state_inplace(target=cuda(), **PARAMS)


@pytest.fixture(scope="module")
def fixed():
    return merge_state_inplace_fixed(target=cuda(), **PARAMS)


@pytest.fixture(autouse=True)
def unhooked():
    """Every test starts and ends with TVM's own functions in place."""
    if tvm_hook.current() is not None:
        pytest.skip("a kernelrace hook session is active (pytest --kernelrace): these tests need TVM unhooked")
    assert not tvm_hook.is_installed()
    yield
    tvm_hook.uninstall()
    assert all(getattr(TVM_BUILD, n) is ORIGINALS[n] for n in PATCHED)


def assert_unhooked():
    assert tvm_hook.current() is None and not tvm_hook.is_installed()
    assert all(getattr(TVM_BUILD, n) is ORIGINALS[n] for n in PATCHED)


def the_race(findings):
    return [(f.rule, f.severity, f.kernel, f.target, f.first.buffer, f.second.buffer, f.first.kind,
             f.second.kind) for f in findings]


RACE = ("write-after-read", "error", "merge_state_inplace_kernel", "cuda", "S", "S", "read", "write")


def test_raise_mode_raises_from_the_build_call(seed):
    with checking("raise") as session:
        with pytest.raises(RaceError) as info:
            tvm.tirx.build(seed, target=cuda())
        assert tvm_hook.is_installed()
    message = str(info.value)
    # the text report: one line per finding, then the lines it refers to and the witness
    assert "merge_state_inplace.cu:149:3: error[write-after-read] write to S[0] (global)" in message
    assert "first: read S (global) at 134:18" in message and "witness: block" in message
    assert the_race(info.value.findings) == [RACE]
    assert the_race(session.findings) == [RACE]
    assert_unhooked()


def test_collect_mode_collects_exactly_the_race_then_unhooks(seed):
    with checking("collect") as session:
        exe = tvm.compile(seed, target=cuda())       # the build succeeds: collect never raises
    assert exe is not None
    assert [r.kernel for r in session.results] == ["merge_state_inplace_kernel"]
    assert the_race(session.findings) == [RACE]
    f = session.findings[0]
    assert (f.file, f.second.line, f.first.line) == ("merge_state_inplace.cu", 149, 134)
    assert session.errors == [] and session.builds == 1
    assert_unhooked()
    tvm.tirx.build(seed, target=cuda())                 # after the block: not checked
    assert len(session.results) == 1


def test_fixed_variant_is_clean(fixed):
    with checking("raise") as session:
        tvm.tirx.build(fixed, target=cuda())
    assert [(r.kernel, r.status) for r in session.results] == [("merge_state_inplace_kernel", "clean")]
    assert session.findings == []


def test_metal_and_options(seed):
    with checking("collect") as session:
        tvm.tirx.build(seed, target="metal")
    assert [(f.rule, f.target, f.file) for f in session.findings] == [
        ("write-after-read", "metal", "merge_state_inplace.metal")]
    with checking("raise", options=Options(select=("divergent-barrier",))) as session:
        tvm.tirx.build(seed, target=cuda())
    assert len(session.results) == 1 and session.findings == []


def test_vulkan_is_not_built_by_this_tvm_so_nothing_is_checked(seed):
    assert tvm.get_global_func("target.build.vulkan", allow_missing=True) is None
    with checking("raise") as session:
        with pytest.raises(Exception, match="target.build.vulkan"):
            tvm.tirx.build(seed, target="vulkan")
    assert session.results == [] and session.errors == [] and session.builds == 0
    assert_unhooked()


def test_opencl_builds_are_checked_not_skipped(seed):
    # OpenCL was listed in session.skipped until the OpenCL dialect (the other GPU kinds, ROCm and
    # Hexagon, fail in this TVM before the hook sees a module).
    with checking("collect") as session:
        tvm.tirx.build(seed, target="opencl")
    assert len(session.results) == 1 and session.skipped == []


def test_sessions_nest_and_the_innermost_takes_the_kernel(seed):
    with checking("collect") as outer:
        with checking("collect") as inner:
            tvm.tirx.build(seed, target=cuda())
        assert tvm_hook.current() is outer and tvm_hook.is_installed()
        assert len(inner.results) == 1 and outer.results == []
        with pytest.raises(RaceError):
            with checking("raise"):
                tvm.tirx.build(seed, target=cuda())
        assert outer.results == []
        tvm.tirx.build(seed, target=cuda())
        assert len(outer.results) == 1
    assert_unhooked()


def test_restored_when_the_block_raises():
    with pytest.raises(KeyError):
        with checking("collect"):
            assert tvm_hook.is_installed()
            raise KeyError("boom")
    assert_unhooked()


def test_install_uninstall_and_environment(seed):
    session = tvm_hook.install("collect")
    assert tvm_hook.is_installed() and tvm_hook.current() is session
    with checking("collect") as block:          # a block inside install() takes its kernels
        pass
    assert block is not session and tvm_hook.current() is session
    tvm.tirx.build(seed, target=cuda())
    assert the_race(session.findings) == [RACE]
    assert tvm_hook.uninstall() is session
    assert_unhooked()

    assert tvm_hook.install_from_env({}) is None
    assert tvm_hook.install_from_env({"KERNELRACE_TVM_HOOK": ""}) is None
    assert not tvm_hook.is_installed()
    with pytest.raises(ValueError, match="KERNELRACE_TVM_HOOK"):
        tvm_hook.install_from_env({"KERNELRACE_TVM_HOOK": "loud"})
    session = tvm_hook.install_from_env({"KERNELRACE_TVM_HOOK": "raise"})
    assert session.mode == "raise" and tvm_hook.is_installed()
    with pytest.raises(RaceError, match="write-after-read"):
        tvm.tirx.build(seed, target=cuda())
    tvm_hook.uninstall()
    assert_unhooked()
    with pytest.raises(ValueError):
        checking("loud").__enter__()
    assert_unhooked()


def test_importing_the_hook_changes_nothing():
    # Without TVM imported there is nothing it could have patched.
    code = "import sys, analyzer.tvm_checks.hook as h; assert 'tvm' not in sys.modules, 'imported TVM'; assert not h.is_installed()"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr


def test_fail_on_sets_the_lowest_failing_severity():
    def finding(rule, severity):
        return Finding(rule, severity, "m", "k", "k.cu", Location("k.cu", 3, 1, "write", "A", "global"))

    result = KernelResult("k", "k.cu", "cuda", {}, [finding("write-after-read", "warning"),
                                                     finding("read-after-write", "error")])
    assert [f.rule for r in tvm_hook.failing([result]) for f in r.findings] == ["read-after-write"]
    assert [f.rule for r in tvm_hook.failing([result], "warning") for f in r.findings] == [
        "write-after-read", "read-after-write"]
    assert "k.cu:3:1: error[read-after-write] m  kernel k [cuda]" in tvm_hook.render(tvm_hook.failing([result]))
