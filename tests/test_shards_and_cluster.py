"""`--shard K/N` splits a run into N disjoint parts whose findings together are the whole run's;
`--cluster ADDRESS` runs the files and builds as tasks on a Dask distributed scheduler and reports
what `--jobs 1` reports, in the same order.

Findings are compared by what they are (rule, severity, kernel, build, the two accesses' places),
not by their witness's thread numbers: those are the solver's pick among many, and may depend on
what the process solved before (see the closing note of issue 18)."""

from __future__ import annotations

import json
import socket
from collections import Counter
from pathlib import Path

import pytest

from analyzer.command import shard
from conftest import FIXTURES

MERGE = "tvm.relax.frontend.nn.llm._decode_kernels:_merge_state_inplace"
SWEEP = ["lint", MERGE, "--target", "cuda,metal", "--param", "num_heads=8", "--param", "head_dim=64,128",
         "--param", "v_dtype=float16", "--hints", "off", "--no-config", "--format", "json"]
FILES = [str(FIXTURES / "cuda" / n) for n in (
    "counter_increment.cu", "counter_increment_fixed.cu", "back_to_back_barriers.cu", "divergent_barrier.cu",
    "double_buffer.cu", "double_buffer_fixed.cu", "atomic_ticket.cu")] + [
    str(FIXTURES / "metal" / "divergent_barrier.metal")]
CHECK = ["check", *FILES, "--block-dim", "64", "--no-config", "--format", "json"]


def _place(loc: dict | None):
    return None if loc is None else (loc["file"], loc["line"], loc["col"], loc["kind"], loc["buffer"])


def _finding(f: dict):
    return (f["rule"], f["severity"], f["kernel"], f["target"], json.dumps(f["params"], sort_keys=True),
            f["file"], _place(f["first"]), _place(f["second"]))


def _kernel(k: dict):
    return (k["kernel"], k["file"], k["target"], json.dumps(k["params"], sort_keys=True), k["status"],
            k["findings"])


@pytest.fixture(scope="module")
def sweep_jobs_1():
    """The lint sweep in one process: what shards and the cluster must add up to."""
    import contextlib
    import io

    from analyzer.cli import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        code = main([*SWEEP, "--jobs", "1"])
    return code, json.loads(out.getvalue())


# --- --shard -------------------------------------------------------------------------------------

def test_the_split_is_a_partition_balanced_and_independent_of_the_process():
    units = [f"kernels/k{i}.cu" for i in range(10)]
    parts = [shard.Shard(k, 3).take(units, lambda u: u) for k in (1, 2, 3)]
    assert sorted(u for p in parts for u in p) == sorted(units)
    assert sorted(len(p) for p in parts) == [3, 3, 4]
    for p in parts:      # a shard keeps the run's own order
        assert p == sorted(p, key=units.index)
    # Fixed by the units' names alone (SHA-256, not hash()): the same split on every machine.
    assert parts[0] == ["kernels/k0.cu", "kernels/k1.cu", "kernels/k8.cu", "kernels/k9.cu"]
    assert shard.Shard(1, 1).take(units, lambda u: u) == units


@pytest.mark.parametrize("text", ["x", "1", "0/3", "4/3", "1/0", "-1/2", "1/2/3", "a/b"])
def test_a_malformed_shard_is_one_line_and_exit_2(cli, text):
    with pytest.raises(SystemExit) as exc:
        cli("check", FILES[0], "--shard", text)
    assert exc.value.code == 2


def test_a_malformed_shard_names_itself(capsys):
    from analyzer.cli import main

    with pytest.raises(SystemExit):
        main(["check", FILES[0], "--shard", "4/3"])
    err = capsys.readouterr().err
    assert err == "kernelrace: error: argument --shard: expected K/N with 1 <= K <= N, got '4/3'\n"


def test_check_shards_add_up_to_the_whole_run(cli):
    code, whole, _ = cli(*CHECK, "--jobs", "1")
    assert code == 1
    findings, kernels, units = Counter(), [], 0
    for k in (1, 2, 3):
        code, part, err = cli(*CHECK, "--jobs", "1", "--shard", f"{k}/3")
        assert code in (0, 1), err
        s = part["summary"]["shard"]
        assert (s["index"], s["count"], s["of"], s["unit"]) == (k, 3, len(FILES), "files")
        assert 2 <= s["units"] <= 3     # eight files in three shards
        units += s["units"]
        findings.update(_finding(f) for f in part["findings"])
        kernels += [_kernel(k) for k in part["kernels"]]
    assert units == len(FILES)
    assert findings == Counter(_finding(f) for f in whole["findings"])
    assert sorted(kernels) == sorted(_kernel(k) for k in whole["kernels"])


def test_the_text_summary_and_sarif_say_which_shard(cli):
    code, out, _ = cli("check", *FILES, "--block-dim", "64", "--no-config", "--jobs", "1", "--shard", "2/3", "-q")
    assert out.strip().endswith("; shard 2 of 3 (3 of 8 files)")
    code, out, _ = cli("check", *FILES, "--block-dim", "64", "--no-config", "--jobs", "1", "--shard", "2/3",
                       "--format", "sarif")
    (invocation,) = json.loads(out)["runs"][0]["invocations"]
    assert invocation["properties"]["shard"] == {"index": 2, "count": 3, "units": 3, "of": 8, "unit": "files"}


@pytest.mark.slow   # a whole sweep in shards: the slow set
def test_configured_run_shards_add_up_to_the_whole_sweep(cli, tmp_path, monkeypatch, sweep_jobs_1):
    """The bare command (the configured run) sharded, against the same builds linted at once."""
    (tmp_path / "kernelrace.toml").write_text(
        f'[[lint]]\nbuilder = "{MERGE}"\ntargets = ["cuda", "metal"]\n'
        f'params = {{ num_heads = 8, head_dim = [64, 128], v_dtype = "float16" }}\n')
    monkeypatch.chdir(tmp_path)
    code, whole = sweep_jobs_1
    findings, kernels = Counter(), []
    for k in (1, 2, 3):
        code, part, err = cli("--shard", f"{k}/3", "--hints", "off", "--format", "json", "--jobs", "1")
        assert code in (0, 1), err
        assert part["summary"]["shard"]["of"] == 4 and part["summary"]["shard"]["unit"] == "builds"
        findings.update(_finding(f) for f in part["findings"])
        kernels += [_kernel(k) for k in part["kernels"]]
    assert findings == Counter(_finding(f) for f in whole["findings"]) and findings
    assert sorted(kernels) == sorted(_kernel(k) for k in whole["kernels"])


def test_llm_shards_split_the_table_and_add_up_to_it(cli):
    args = ["llm", "--num-qo-heads", "8", "--num-kv-heads", "1", "--head-dim", "128", "--target", "cuda",
            "--only", "_merge_state_inplace,_copy_single_page", "--hints", "off", "--format", "json", "--jobs", "1"]
    code, whole, _ = cli(*args)
    assert code == 1
    rows, findings = [], Counter()
    for k in (1, 2):
        code, part, err = cli(*args, "--shard", f"{k}/2")
        assert code in (0, 1), err
        assert part["summary"]["shard"]["units"] == 1 and part["summary"]["shard"]["of"] == 2
        rows += [(r["kernel"], r["target"], r["status"], r["reason"]) for r in part["llm"]["rows"]]
        findings.update(_finding(f) for f in part["findings"])
    # Each row of the whole table is in exactly one shard's table: built, or skipped with its reason.
    assert sorted(rows) == sorted((r["kernel"], r["target"], r["status"], r["reason"]) for r in whole["llm"]["rows"])
    assert findings == Counter(_finding(f) for f in whole["findings"])


def test_a_shard_writes_no_baseline(cli, tmp_path):
    code, _, err = cli("check", FILES[0], "--no-config", "--shard", "1/2", "--write-baseline",
                       str(tmp_path / "b.json"))
    assert code == 2 and "not with --shard" in err and len(err.strip().splitlines()) == 1


# --- --cluster -----------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def cluster():
    """Two worker processes of one thread each, as `dask worker ADDRESS --nthreads 1` starts them.
    Processes (not threads of this process): the tasks and their results really travel."""
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0",
                                  silence_logs=40) as c:
        yield c.scheduler_address


@pytest.mark.slow   # a local cluster's sweep (distributed): the slow set
def test_a_sweep_on_a_cluster_reports_what_one_process_does(cli, cluster, sweep_jobs_1):
    code, whole = sweep_jobs_1
    got_code, got, err = cli(*SWEEP, "--cluster", cluster)
    assert (got_code, err) == (code, "")
    assert [_kernel(k) for k in got["kernels"]] == [_kernel(k) for k in whole["kernels"]]
    assert [_finding(f) for f in got["findings"]] == [_finding(f) for f in whole["findings"]]
    assert got["summary"] == whole["summary"]
    assert {k["target"] for k in got["kernels"]} == {"cuda", "metal"} and got["findings"]


@pytest.mark.slow   # a local cluster (distributed): the slow set
def test_files_on_a_cluster_give_the_report_of_one_process(cli, cluster):
    code, whole, _ = cli(*CHECK, "--jobs", "1")
    got_code, got, err = cli(*CHECK, "--cluster", cluster)
    assert (got_code, err) == (code, "")
    assert [_kernel(k) for k in got["kernels"]] == [_kernel(k) for k in whole["kernels"]]
    assert [_finding(f) for f in got["findings"]] == [_finding(f) for f in whole["findings"]]
    assert got["summary"] == whole["summary"]


@pytest.mark.slow   # a local cluster (distributed): the slow set
def test_a_shard_on_a_cluster(cli, cluster):
    code, part, err = cli(*CHECK, "--cluster", cluster, "--shard", "1/3")
    assert code in (0, 1), err
    assert len(part["kernels"]) == part["summary"]["shard"]["units"] == 3


@pytest.mark.slow   # a local cluster (distributed): the slow set
def test_a_bad_file_on_a_cluster_is_one_unknown_entry_and_alone_exit_2(cli, cluster, tmp_path):
    bad = tmp_path / "bad.cu"
    bad.write_text('extern "C" __global__ void k(float* a) { a[0] = ; }\n')
    code, report, err = cli("check", FILES[0], str(bad), "--no-config", "--cluster", cluster, "--format", "json")
    assert code in (0, 1) and err == ""
    assert [f["file"] for f in report["findings"] if f["rule"] == "unknown"] == [str(bad)]
    code, out, err = cli("check", str(bad), "--no-config", "--cluster", cluster)
    assert code == 2 and out == ""
    assert err.startswith(f"kernelrace: error: {bad}:1:")
    assert len(err.strip().splitlines()) == 1


def _closed_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


# The ids are fixed: a closed port's number differs between runs, and pytest-xdist's workers must
# collect the same test names.
@pytest.mark.parametrize("address, says", [
    (f"127.0.0.1:{_closed_port()}", "cannot reach the Dask scheduler"),
    ("no port", "not a Dask scheduler address (expected HOST:PORT or tcp://HOST:PORT)"),
    ("tcp://localhost:x", "not a Dask scheduler address"),
], ids=["closed-port", "no-port", "bad-port"])
def test_an_unreachable_or_malformed_cluster_is_one_line_and_exit_2(cli, address, says):
    code, out, err = cli("check", FILES[0], "--no-config", "--cluster", address)
    assert code == 2 and out == ""
    assert err.startswith(f"kernelrace: error: --cluster {address}: {says}")
    assert len(err.strip().splitlines()) == 1


def test_cluster_and_jobs_do_not_go_together(cli):
    code, _, err = cli("check", FILES[0], "--no-config", "--cluster", "127.0.0.1:1", "--jobs", "2")
    assert code == 2 and "--cluster and --jobs cannot be used together" in err


def test_a_worker_without_this_kernelrace_is_named(monkeypatch):
    """Workers whose kernelrace, Z3 or TVM differ would make the report depend on where a unit ran."""
    from analyzer.command import parallel
    from analyzer.errors import KernelraceError

    class Client:
        def run_on_scheduler(self, fn):
            return fn()

        def run(self, fn):
            return {"tcp://10.0.0.2:4000": ("1", "0.1.0", "0" * 64, "4.12", "0.26"),
                    "tcp://10.0.0.1:4000": parallel.fingerprint()}

    c = parallel.Cluster.__new__(parallel.Cluster)
    c.client = Client()
    with pytest.raises(KernelraceError) as exc:
        c._same_kernelrace("h:1")
    assert str(exc.value).startswith("--cluster h:1: worker tcp://10.0.0.2:4000 runs another kernelrace, Z3 or TVM "
                                     "than this process (kernelrace 0.1.0 sources 000000000000, Z3 4.12, TVM 0.26 "
                                     "there, kernelrace ")
