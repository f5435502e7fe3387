"""`kernelrace check DIR` walks for kernel files; `--jobs N` analyses in worker processes and
reports exactly what one process reports, in the same order."""

import json
import re
import shutil
from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures"
RACY = (FIXTURES / "cuda" / "counter_increment.cu").read_text()
CLEAN = (FIXTURES / "cuda" / "counter_increment_fixed.cu").read_text()


def _tree(root: Path) -> Path:
    (root / "kernels" / "sub").mkdir(parents=True)
    (root / "kernels" / ".cache").mkdir()
    (root / "kernels" / "vendor").mkdir()
    (root / "kernels" / "a.cu").write_text(RACY)
    (root / "kernels" / "sub" / "b.cu").write_text(CLEAN)
    shutil.copy(FIXTURES / "metal" / "divergent_barrier.metal", root / "kernels" / "sub" / "c.metal")
    (root / "kernels" / ".cache" / "d.cu").write_text(RACY)        # hidden folder: skipped
    (root / "kernels" / "vendor" / "e.cu").write_text(RACY)        # excluded by the configuration
    (root / "kernels" / "notes.txt").write_text("not a kernel")    # unknown language: skipped
    (root / "kernelrace.toml").write_text('exclude = ["vendor"]\n')
    return root / "kernels"


def test_a_directory_is_walked_for_kernel_files(cli, tmp_path, monkeypatch):
    kernels = _tree(tmp_path)
    monkeypatch.chdir(tmp_path)
    code, report, err = cli("check", "kernels", "--block-dim", "64", "--format", "json", "-v")
    assert code == 1
    checked = [k["file"] for k in report["kernels"]]
    assert checked == [str(Path("kernels") / "a.cu"), str(Path("kernels") / "sub" / "b.cu"),
                       str(Path("kernels") / "sub" / "c.metal")]
    assert {f["file"] for f in report["findings"]} >= {str(Path("kernels") / "a.cu")}
    assert f"skipped {kernels / 'notes.txt'}".replace(str(tmp_path) + "/", "") in err


def test_a_directory_without_kernels_is_bad_input(cli, tmp_path):
    (tmp_path / "empty").mkdir()
    code, out, err = cli("check", str(tmp_path / "empty"), "--no-config")
    assert code == 2
    assert err.strip().endswith("no kernel files in this directory (.cu, .cuh, .metal, .cl, .spvasm, .spv, .comp, .glsl, .wgsl)")
    assert len(err.strip().splitlines()) == 1


def _without_times(text: str) -> str:
    return re.sub(r'"seconds": [0-9.e-]+', '"seconds": 0', text)


def test_jobs_give_the_report_of_one_process(cli, capsys):
    files = [str(FIXTURES / "cuda" / n) for n in ("counter_increment.cu", "counter_increment_fixed.cu",
                                                    "back_to_back_barriers.cu", "divergent_barrier.cu")]
    reports = []
    for jobs in ("1", "2"):
        code, out, _ = cli("check", *files, "--block-dim", "64", "--no-config", "--format", "json", "--jobs", jobs)
        assert code == 1
        reports.append(_without_times(json.dumps(out, sort_keys=True)))
    assert reports[0] == reports[1]
    assert '"file": "' + files[0] in reports[0]


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_bad_file_among_many_is_one_unknown_entry_and_the_rest_go_on(cli, tmp_path, jobs):
    bad = tmp_path / "bad.cu"
    bad.write_text('extern "C" __global__ void k(float* a) { a[0] = ; }\n')
    racy = str(FIXTURES / "cuda" / "counter_increment.cu")
    code, report, err = cli("check", racy, str(bad), "--no-config", "--jobs", jobs, "--format", "json")
    assert code == 1 and err == ""      # the racy file's error finding decides the exit status
    unknown = [f for f in report["findings"] if f["rule"] == "unknown"]
    assert [(f["file"], f["second"]["line"], f["message"].split(":")[0]) for f in unknown] == [
        (str(bad), 1, "not analysed")]
    assert {f["file"] for f in report["findings"] if f["rule"] != "unknown"} == {racy}
    # Nothing analysed at all: the first file's error is the run's, one line, exit 2.
    code, _, err = cli("check", str(bad), str(bad), "--no-config", "--jobs", jobs)
    assert code == 2 and err.startswith(f"kernelrace: error: {bad}:1:") and len(err.strip().splitlines()) == 1


def test_a_worker_killed_by_a_signal_is_one_unknown_build_and_the_rest_go_on(cli):
    # The builder kills its process with SIGSEGV for crash=1 (TVM's code generators do, at times):
    # that build is `unknown` naming the signal, the other build is checked, no internal error.
    code, report, err = cli("lint", "builders.crashing:tiles", "--target", "cuda", "--param", "crash=1,0",
                            "--jobs", "2", "--no-config", "--format", "json")
    assert code == 0, err
    unknown = [f for f in report["findings"] if f["rule"] == "unknown"]
    assert len(unknown) == 1 and "signal SIGSEGV" in unknown[0]["message"]
    assert unknown[0]["params"] == {"crash": 1}
    assert [k["params"] for k in report["kernels"] if k["status"] == "clean"] == [{"crash": 0}]


def test_workers_rerun_the_units_a_dying_worker_took_down():
    from analyzer.command.parallel import WorkerDied, Workers
    from builders.crashing import tiles as _  # noqa: F401  (importable: the units below are)

    with Workers(2) as workers:
        handles = [workers.submit(_unit, i) for i in range(6)]
        out = []
        for h in handles:
            try:
                out.append(h.result())
            except WorkerDied as exc:
                out.append(str(exc).split(" (")[1].split(")")[0])
    assert out == [0, 10, "signal SIGKILL", 30, 40, 50]


def _unit(i: int) -> int:
    import os
    import signal
    import time
    time.sleep(0.1)         # the units overlap in the two workers
    if i == 2:
        os.kill(os.getpid(), signal.SIGKILL)
    return 10 * i


def test_jobs_in_the_configuration_are_checked(cli, tmp_path, monkeypatch):
    (tmp_path / "kernelrace.toml").write_text("jobs = 0\n")
    monkeypatch.chdir(tmp_path)
    code, out, err = cli("check", str(FIXTURES / "cuda" / "counter_increment.cu"))
    assert code == 2
    assert "jobs: expected a positive number of worker processes, got 0" in err
