"""The result cache (analyzer/command/cache.py): a re-run reuses results and reports the same; whatever
can change a verdict misses; a damaged or foreign entry is never trusted; concurrent writers leave
a whole entry. conftest.py gives each test an empty cache of its own in KERNELRACE_CACHE_DIR, off unless turned
on as here."""

from __future__ import annotations

import hashlib
import json
import multiprocessing
import os
import pickle
import re
import shutil
from pathlib import Path

import pytest

from analyzer.command import cache
from analyzer.command.cache import MAGIC, ResultCache
from analyzer.findings import KernelResult
from analyzer.pipeline import Options, check_file
from conftest import FIXTURES

COUNTER = FIXTURES / "cuda" / "counter_increment.cu"
MERGE = "tvm.relax.frontend.nn.llm._decode_kernels:_merge_state_inplace"
# A kernel with a scalar parameter: whether it races depends on the define.
STRIDED = ('extern "C" __global__ void strided(float* a, int s) {\n'
           '    a[threadIdx.x * s] = a[threadIdx.x * s + 1];\n}\n')


@pytest.fixture(autouse=True)
def _cache_on(monkeypatch):
    monkeypatch.delenv(cache.NO_CACHE_ENV)    # conftest.py turns the cache off for the other tests


def _entries(root) -> list[Path]:
    return sorted(Path(root).rglob("*.pickle"))


def _without_times(report: dict) -> str:
    return re.sub(r'"seconds": [0-9.e-]+', '"seconds": 0', json.dumps(report, sort_keys=True))


def _check(cli, *args):
    """(exit, JSON report with -v, whether every kernel was read from the cache)."""
    code, report, err = cli("check", *args, "--no-config", "--format", "json", "-v")
    assert code in (0, 1), err
    flags = {k["cached"] for k in report["kernels"]}
    assert len(flags) == 1
    for k in report["kernels"]:
        k.pop("cached")
    return code, report, flags.pop()


def test_a_second_run_reads_the_cache_and_reports_the_same(cli, tmp_path):
    args = (str(COUNTER), str(FIXTURES / "cuda" / "back_to_back_barriers.cu"), "--block-dim", "64",
            "--cache-dir", str(tmp_path))
    code1, first, cached1 = _check(cli, *args)
    assert not cached1 and len(_entries(tmp_path)) == 2
    code2, second, cached2 = _check(cli, *args)
    assert cached2 and code1 == code2 == 1
    assert _without_times(first) == _without_times(second)
    # Text and SARIF, byte for byte; -v says which kernels were cached.
    outs = [cli("check", *args, "--no-config", "--format", fmt)[1] for fmt in ("sarif", "sarif")]
    assert outs[0] == outs[1]
    _, text, _ = cli("check", *args, "--no-config", "-v")
    assert "s (cached)," in text
    _, plain, _ = cli("check", *args, "--no-config")
    assert "cached" not in plain


def test_source_options_and_defines_miss(cli, tmp_path):
    kernel = tmp_path / "k.cu"
    kernel.write_text(STRIDED)
    where = ("--cache-dir", str(tmp_path / "cache"))
    base = (str(kernel), "--block-dim", "32", *where)
    assert not _check(cli, *base, "--scalar", "s=1")[2]
    assert _check(cli, *base, "--scalar", "s=1")[2]
    assert not _check(cli, *base, "--scalar", "s=2")[2]           # another define
    assert not _check(cli, *base, "--scalar", "s=1", "--strict")[2]   # another option
    assert not _check(cli, *base, "--scalar", "s=1", "--hints", "off")[2]
    assert not _check(cli, str(kernel), "--block-dim", "64", "--scalar", "s=1", *where)[2]   # another launch
    assert not _check(cli, *base, "--scalar", "s=0")[2]
    kernel.write_text(STRIDED.replace("+ 1]", "+ 2]"))            # another source
    assert not _check(cli, *base, "--scalar", "s=0")[2]
    assert len(_entries(tmp_path / "cache")) == 7


def _only_entry(root) -> Path:
    (entry,) = _entries(root)
    return entry


def test_a_corrupt_or_truncated_entry_is_ignored_and_rewritten(cli, tmp_path):
    args = (str(COUNTER), "--block-dim", "64", "--cache-dir", str(tmp_path))
    _, first, _ = _check(cli, *args)
    entry = _only_entry(tmp_path)
    good = entry.read_bytes()
    for damaged in (good[: len(good) // 2], good[:-1] + bytes([good[-1] ^ 1]), b"", b"not a cache entry",
                    good.replace(MAGIC, b"kernelrace-cache 0\n")):
        entry.write_bytes(damaged)
        _, again, cached = _check(cli, *args)
        assert not cached
        assert _without_times(again) == _without_times(first)
        assert entry.read_bytes() != damaged
        assert _check(cli, *args)[2]     # rewritten: the next run reads it


def _results() -> list[KernelResult]:
    return check_file(str(COUNTER), None, (64,), None, {}, Options(hints="off"))


def test_an_entry_under_another_key_is_refused(tmp_path):
    store = ResultCache(str(tmp_path))
    a, b = store.key("check", ("a",)), store.key("check", ("b",))
    store.put(a, _results())
    assert store.get(a) is not None
    store.path(b).parent.mkdir(parents=True, exist_ok=True)
    os.replace(store.path(a), store.path(b))
    assert store.get(b) is None


class _Boom:
    def __reduce__(self):
        return (os.mkdir, (self.where,))


def test_an_entry_that_would_run_code_is_refused(tmp_path):
    """A well-formed entry (right header, checksum and key) holding anything but findings."""
    store = ResultCache(str(tmp_path / "cache"))
    key = store.key("check", ("x",))
    boom = _Boom()
    boom.where = str(tmp_path / "pwned")
    payload = pickle.dumps({"key": key, "results": [boom]})
    store.path(key).parent.mkdir(parents=True)
    store.path(key).write_bytes(MAGIC + hashlib.sha256(payload).digest() + payload)
    assert store.get(key) is None
    assert not (tmp_path / "pwned").exists()


def _writer(root: str, key: str, results: list[KernelResult], times: int) -> None:
    store = ResultCache(root)
    for _ in range(times):
        store.put(key, results)


def test_concurrent_writers_leave_a_whole_entry(tmp_path):
    store = ResultCache(str(tmp_path))
    key = store.key("check", ("same",))
    results = _results()
    ctx = multiprocessing.get_context("fork")
    procs = [ctx.Process(target=_writer, args=(str(tmp_path), key, results, 40)) for _ in range(2)]
    for p in procs:
        p.start()
    seen = 0
    while any(p.is_alive() for p in procs):
        # Once an entry is in place it is only ever replaced whole: every read from then on succeeds.
        got = store.get(key)
        assert got is not None or seen == 0, "a reader saw a partial entry"
        if got is not None:
            seen += 1
            assert [f.as_dict() for f in got[0].findings] == [f.as_dict() for f in results[0].findings]
    for p in procs:
        p.join()
        assert p.exitcode == 0
    assert store.get(key) is not None
    assert [p.name for p in store.path(key).parent.iterdir()] == [store.path(key).name]   # no temporary left


def test_no_cache_writes_nothing(cli, tmp_path, monkeypatch):
    monkeypatch.setenv(cache.ENV, str(tmp_path / "env-cache"))
    _, _, cached = _check(cli, str(COUNTER), "--block-dim", "64", "--no-cache")
    assert not cached
    assert not (tmp_path / "env-cache").exists()
    _check(cli, str(COUNTER), "--block-dim", "64")     # the environment's directory, when on
    assert len(_entries(tmp_path / "env-cache")) == 1
    code, _, err = cli("check", str(COUNTER), "--no-cache", "--cache-dir", str(tmp_path))
    assert code == 2 and "--cache-dir and --no-cache cannot be used together" in err
    monkeypatch.setenv(cache.NO_CACHE_ENV, "1")      # the environment's --no-cache
    _check(cli, str(COUNTER), "--block-dim", "64", "--cache-dir", str(tmp_path / "off"))
    assert not (tmp_path / "off").exists()


def test_cache_dir_from_the_configuration(cli, tmp_path, monkeypatch):
    monkeypatch.delenv(cache.ENV)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "kernelrace.toml").write_text('cache-dir = ".kc"\n[check]\nblock-dim = 64\n')
    for _ in range(2):
        code, out, err = cli("check", str(COUNTER), "-v")
        assert code == 1
    assert "s (cached)," in out
    assert len(_entries(tmp_path / ".kc")) == 1
    # the command line and the environment win over the file
    code, out, err = cli("check", str(COUNTER), "--cache-dir", "cli")
    assert len(_entries(tmp_path / "cli")) == 1
    monkeypatch.setenv(cache.ENV, str(tmp_path / "env"))
    code, out, err = cli("check", str(COUNTER))
    assert len(_entries(tmp_path / "env")) == 1
    (tmp_path / "kernelrace.toml").write_text("cache-dir = 3\n")
    code, out, err = cli("check", str(COUNTER))
    assert code == 2 and "cache-dir: expected a directory path, got 3" in err
    (tmp_path / "afile").write_text("")
    code, out, err = cli("check", str(COUNTER), "--cache-dir", "afile", "--no-config")
    assert code == 2 and "afile: the cache directory is a file" in err


def test_editing_kernelrace_invalidates_the_cache(tmp_path, monkeypatch):
    for pkg in cache.OWN_SOURCES:
        shutil.copytree(cache.ROOT / pkg, tmp_path / pkg, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(cache, "ROOT", tmp_path)
    store = ResultCache(str(tmp_path / "cache"))
    try:
        cache._versions.cache_clear()
        before = store.key("check", ("same",))
        with open(tmp_path / "rules" / "__init__.py", "a") as f:
            f.write("\n# an edit\n")
        cache._versions.cache_clear()
        assert store.key("check", ("same",)) != before
    finally:
        cache._versions.cache_clear()


def test_a_kernel_stopped_by_the_wall_clock_is_not_kept(tmp_path):
    store = ResultCache(str(tmp_path))
    slow = [KernelResult("k", "k.cu", None, None, [], seconds=5.0)]
    store.through("check", ("slow",), lambda: slow, kernel_timeout_s=5.0)
    assert _entries(tmp_path) == []
    store.through("check", ("quick",), lambda: slow, kernel_timeout_s=6.0)
    assert len(_entries(tmp_path)) == 1


def test_an_input_without_a_stable_description_is_not_cached(tmp_path):
    store = ResultCache(str(tmp_path))
    assert store.key("check", (object(),)) is None
    assert store.key("check", ({"b", "a"}, [1, (2,)])) == store.key("check", ({"a", "b"}, [1, (2,)]))


def test_lint_reads_each_build_s_analysis_from_the_cache(cli, tmp_path):
    args = ("lint", MERGE, "--target", "cuda", "--param", "num_heads=8", "--param", "head_dim=128",
            "--param", "v_dtype=float16", "--cache-dir", str(tmp_path), "--format", "json", "-v", "--jobs", "1")
    reports = []
    for _ in range(2):
        code, report, err = cli(*args)
        reports.append(report)
    assert [k["cached"] for r in reports for k in r["kernels"]] == [False, True]
    assert "(cached)" in err
    for r in reports:
        for k in r["kernels"]:
            k.pop("cached")
    assert _without_times(reports[0]) == _without_times(reports[1])
