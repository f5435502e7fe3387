"""`kernelrace check DIR` walks for kernel files; `--jobs N` analyses in worker processes and
reports exactly what one process reports, in the same order."""

import json
import re
import shutil
from pathlib import Path

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


def test_a_bad_file_among_many_is_one_line_and_exit_2_with_workers(cli, tmp_path):
    bad = tmp_path / "bad.cu"
    bad.write_text('extern "C" __global__ void k(float* a) { a[0] = ; }\n')
    code, out, err = cli("check", str(FIXTURES / "cuda" / "counter_increment.cu"), str(bad), "--no-config",
                         "--jobs", "2")
    assert code == 2
    assert err.startswith(f"kernelrace: error: {bad}:1:")
    assert len(err.strip().splitlines()) == 1


def test_jobs_in_the_configuration_are_checked(cli, tmp_path, monkeypatch):
    (tmp_path / "kernelrace.toml").write_text("jobs = 0\n")
    monkeypatch.chdir(tmp_path)
    code, out, err = cli("check", str(FIXTURES / "cuda" / "counter_increment.cu"))
    assert code == 2
    assert "jobs: expected a positive number of worker processes, got 0" in err
