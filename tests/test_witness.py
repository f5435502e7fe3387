"""Witnesses are concrete and consistent: re-evaluating the accesses at the witness collides."""

import json
import os
import shlex
import subprocess
import sys

import pytest

from conftest import FIXTURES, TESTS

DATA = TESTS / "data"
ROOT = TESTS.parent


def test_loop_carried_race_names_both_iterations(cli):
    path = FIXTURES / "cuda" / "double_buffer.cu"
    code, report, _ = cli("check", str(path), "--block-dim", "128", "--scalar", "steps=8", "--format", "json")
    (f,) = report["findings"]
    assert (f["rule"], f["first"]["line"], f["second"]["line"]) == ("write-after-read", 11, 9)
    w = f["witness"]
    loop_line = "8"
    # The read `buf[(tid + 1) % 128]` in iteration k, the store `buf[tid]` in iteration k + 1.
    assert w["second_iterations"][loop_line] == w["first_iterations"][loop_line] + 1
    assert (w["first_thread"][0] + 1) % 128 == w["element"] == w["second_thread"][0]
    assert w["byte_offset"] == 4 * w["element"]


def test_benign_same_value_writes_only_under_strict(cli):
    path = FIXTURES / "cuda" / "benign_same_value.cu"
    code, report, _ = cli("check", str(path), "--block-dim", "64", "--format", "json")
    assert code == 0 and report["findings"] == []
    code, report, _ = cli("check", str(path), "--block-dim", "64", "--format", "json", "--strict")
    assert code == 1
    assert {f["rule"] for f in report["findings"]} == {"write-after-write"}
    assert all(f["witness"]["benign"] for f in report["findings"])


def test_symbolic_block_size_still_finds_the_race(cli):
    # Without --block-dim the extents are symbolic: the witness picks a block size that shows it.
    # (Between blocks the kernel races too once blockDim.x > 128: its tiles are 128 wide. That is
    # test_grid.py's business; here only the block's own pairs.)
    path = FIXTURES / "cuda" / "neighbour_shift.cu"
    code, report, _ = cli("check", str(path), "--format", "json", "--scope", "block")
    assert code == 1
    assert [f["rule"] for f in report["findings"]] == ["read-after-write"]


def test_select_runs_only_the_named_rules(cli):
    path = FIXTURES / "cuda" / "divergent_barrier.cu"
    code, report, _ = cli("check", str(path), "--block-dim", "64", "--format", "json", "--select", "write-after-read")
    assert code == 0 and report["findings"] == []


LOOP_STATE_KERNEL = """
extern "C" __global__ void k(float* __restrict__ out, int n) {
  int idx[1];
  idx[0] = 0;
  for (int j = 0; j < 32; ++j) {
    if (((int)threadIdx.x) == j) { out[%s] = (float)j; }
    if (j >= 0) { idx[0] = idx[0] + n; }
  }
}
"""


def test_a_collision_that_needs_loop_state_to_repeat_says_so(cli, tmp_path):
    """Thread j stores in iteration j at `idx`, stepped by n: two threads meet only if idx holds
    one value in two iterations (n == 0). Still an error; the note names what it rests on."""
    path = tmp_path / "k.cu"
    path.write_text(LOOP_STATE_KERNEL % "idx[0]")
    code, report, _ = cli("check", str(path), "--block-dim", "32", "--format", "json")
    (f,) = report["findings"]
    assert (code, f["rule"], f["severity"]) == (1, "write-after-write", "error")
    assert f["witness"]["loop_state"] == [{"name": "idx", "loop_line": 5}]
    assert any("loop-carried `idx`" in n for n in f["notes"])
    # A store to one place every iteration collides whatever idx holds: no such note.
    path.write_text(LOOP_STATE_KERNEL % "0")
    code, report, _ = cli("check", str(path), "--block-dim", "32", "--format", "json")
    (f,) = report["findings"]
    assert f["witness"]["loop_state"] == [] and not any("loop-carried" in n for n in f["notes"])


# A loop with a parameter step before the accesses: a model with the step 0 (or of the wrong
# sign) never leaves the loop, so its witness does not replay. The queries know the loop ended
# (symbolic.py, `_ended`): the first loop's own fact, the nested one's through its outer loop.
ENDED_KERNELS = {
    "own": """
extern "C" __global__ void k(float* g, int P0, int P1) {
    __shared__ float s[64];
    for (int r = 2; r < 16; r += P0) {
        g[r] = 1.0f;
    }
    s[threadIdx.x % 64] = 1.0f;
    for (int q = P1; q < 8; q += P0 + 1) {
        g[q + 64] = s[(threadIdx.x + 1) % 64];
    }
}
""",
    "nested": """
extern "C" __global__ void k(float* g, int P0, int P1) {
    __shared__ float s[64];
    for (int r0 = 14; r0 < P1; r0 += P1) {
        for (int r1 = P1 - 4; r1 > -16; r1 -= P0) {
            g[r1 + 32] = 1.0f;
        }
    }
    s[threadIdx.x % 64] = 1.0f;
    float v = s[(threadIdx.x + 1) % 64];
    g[threadIdx.x] = v;
}
""",
}


@pytest.mark.parametrize("name", sorted(ENDED_KERNELS))
def test_witnesses_after_a_loop_with_a_parameter_step_replay(cli, tmp_path, name):
    path = tmp_path / "k.cu"
    path.write_text(ENDED_KERNELS[name])
    code, report, err = cli("check", str(path), "--block-dim", "64", "--format", "json")
    assert code == 1, err
    # The race on s after the loops is still found (a thread that never enters them reaches it).
    assert "read-after-write" in {f["rule"] for f in report["findings"]}
    assert [(f["rule"], f["second"]["line"]) for f in report["findings"] if not f["witness"]["replayed"]] == []


# A loop with a parameter step that the other thread must leave to reach its access in a later
# iteration of the loop around both: the query asks each thread's iterations, not that the loops
# run before them end, and a model with the step 0 (or of the wrong sign) left the replay stuck.
# Witnesses wish such loops to move toward their bounds (progress.py): all of them, then each alone
# ("outer": the race needs the outer loop never to end, the inner one must).
PROGRESS_KERNELS = {
    "inner": """
extern "C" __global__ void k(float* g, int P0, int P1) {
    for (int r = 0; r < 6; r += P1 + 1) {
        float a = g[threadIdx.x * P1];
        int w = 2;
        while (w < 3) {
            g[threadIdx.z] = a;
            w += P0;
        }
    }
}
""",
    "outer": """
extern "C" __global__ void k(float* g, int P0, int P1, int P2) {
    for (int r = 8; r < P2; r += P1 + 1) {
        float a = g[threadIdx.x + threadIdx.z];
        for (int q = r; q < 3; q += P0) {
            float b = g[P1 * 3 + r];
            g[threadIdx.z] = (float)threadIdx.x;
        }
    }
}
""",
}


@pytest.mark.parametrize("name", sorted(PROGRESS_KERNELS))
def test_witnesses_leave_the_loops_a_later_iteration_needs(cli, tmp_path, name):
    path = tmp_path / "k.cu"
    path.write_text(PROGRESS_KERNELS[name])
    code, report, err = cli("check", str(path), "--block-dim", "37", "--scope", "block", "--format", "json")
    assert code == 1, err
    assert {"read-after-write", "write-after-read"} <= {f["rule"] for f in report["findings"]}
    assert [(f["rule"], f["witness"]["params"]) for f in report["findings"] if not f["witness"]["replayed"]] == []


def test_a_witness_divides_by_no_zero(cli, tmp_path):
    """`g[(i % rows) * cols + i / rows]`: Z3's first model had `rows = 0`, whose run divides by zero,
    and the report's witness was "not validated" beside a race `rows = 3` shows. A divisor the
    model sets to 0 is wished nonzero first."""
    path = tmp_path / "tile.cu"
    path.write_text("""__global__ void tile(float* g, int rows, int cols) {
    int i = threadIdx.x;
    g[(i % rows) * cols + i / rows] = i;
}
""")
    code, report, err = cli("check", str(path), "--block-dim", "64", "--format", "json", "--hints", "off")
    assert code == 1, err
    [race] = [f for f in report["findings"] if f["rule"] == "write-after-write"]
    assert race["witness"]["replayed"] and race["witness"]["params"]["rows"] != 0


DETERMINISM = [(DATA / "witness" / "nested_loops.metal", ()),
               (FIXTURES / "cuda" / "double_buffer.cu", ("--block-dim", "128"))]


# The slow set's, beside test_determinism.py's hash seeds (two fresh processes a case: 14 s of CPU).
@pytest.mark.slow
@pytest.mark.parametrize("path,args", DETERMINISM, ids=lambda x: getattr(x, "name", ""))
def test_witnesses_do_not_depend_on_string_hashing(path, args):
    """The same JSON whatever PYTHONHASHSEED is: nothing that reaches Z3 (the order of an And's
    terms steers it to one model or another) follows the iteration order of a set of strings
    or of addresses. Subprocesses: the hash seed is fixed when Python starts."""
    first = path.read_text().splitlines()[0]
    args = tuple(shlex.split(first.split("kernelrace-args:", 1)[1])) if "kernelrace-args:" in first else args
    # Both seeds at once, one per core (the suite must fit its time on two).
    runs = [subprocess.Popen([sys.executable, "-m", "analyzer.cli", "check", str(path), *args, "--format", "json"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT,
                             env=os.environ | {"PYTHONHASHSEED": seed, "KERNELRACE_NO_CACHE": "1"})
            for seed in ("0", "3")]
    outs = []
    for run in runs:
        out, err = run.communicate(timeout=300)
        assert run.returncode in (0, 1), err
        outs.append(json.loads(out))
    assert outs[0]["findings"], "a kernel with findings: their witnesses are what is compared"
    assert outs[0] == outs[1]


def test_paths_around_a_barrier_in_a_loop_follow_the_branch_a_thread_takes(cli):
    """reduce2 with its barrier moved inside `if (tid < s)`: the walk around that barrier pins the
    branch each thread took in the iterations it crossed, so the divergent barrier is the finding,
    not a read "between" thread 16's iteration-0 write and thread 0's iteration-1 read that a
    barrier both passed separates (its witness did not replay). The divergence witness is two
    threads at the same instance of the barrier."""
    path = TESTS / "handwritten" / "cuda" / "reduce2_sync_inside_branch.cu"
    code, report, _ = cli("check", str(path), "--block-dim", "64", "--format", "json", "--hints", "off")
    assert code == 1
    assert [f["rule"] for f in report["findings"]] == ["divergent-barrier"]
    w = report["findings"][0]["witness"]
    # s = 32 in the first iteration: a thread below it reaches the barrier, one at or above skips it;
    # the witness says which iteration (of the loop at line 10) both threads are in.
    assert w["reaching_thread"][0] < 32 <= w["skipping_thread"][0]
    assert w["iterations"] == {"10": 0}
    code, report, _ = cli("check", str(path), "--format", "json", "--hints", "off")
    w = next(f["witness"] for f in report["findings"] if f["rule"] == "divergent-barrier")
    assert w["reaching_thread"] != w["skipping_thread"]
    assert all((f["witness"] or {}).get("replayed") is not False for f in report["findings"])
