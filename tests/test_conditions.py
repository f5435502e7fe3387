"""Race conditions (analyzer/analysis/conditions/race_condition.py) and stated launch facts
(analyzer/analysis/stated/assumptions.py, `__launch_bounds__`, unread block dimensions), through the real
CLI, Z3 and ISL."""

import json
import subprocess
import sys
from pathlib import Path

import pytest
import z3

from analyzer.analysis.conditions.race_condition import race_condition
from analyzer.analysis.stated import assumptions
from conftest import cli_in_process

FIX = Path(__file__).parent / "conditions"


def run(*args: str) -> tuple[int, dict, str]:
    # In this process (conftest.cli_in_process): a `python -m analyzer.cli` per run spent 1.5 s of
    # CPU importing kernelrace, more than most of these analyses.
    code, out, err = cli_in_process(["check", "--format", "json", *args])
    return code, (json.loads(out) if out.strip().startswith("{") else {}), err


def text(*args: str) -> tuple[int, str]:
    code, out, err = cli_in_process(["check", *args])
    return code, out + err


def test_row_merge_condition_is_exact_and_read_over_source_names():
    code, report, _ = run(str(FIX / "row_merge.cu"))
    assert code == 1
    war = [f for f in report["findings"] if f["rule"] == "write-after-read"]
    assert len(war) == 1 and "second_block" in war[0]["witness"]
    assert war[0]["condition"] == "-blockDim.y < H < blockDim.y and gridDim.x >= 2"
    assert war[0]["condition_exact"] is True
    # The write-write race's witness needs the one-value facts of S's loads, which feed the stored
    # values (unwritten.py), and ISL cannot project them: the witness's values are its condition,
    # a sufficient one, not a projection that would take in launches where the values are one.
    waw = [f for f in report["findings"] if f["rule"] == "write-after-write"]
    assert len(waw) == 1 and waw[0]["condition"].startswith("H=") and waw[0]["condition_exact"] is False
    # The kernel never reads threadIdx.z: one thread deep, and said.
    kernel = report["kernels"][0]
    assert "blockDim.z = 1, never read" in kernel["assumptions"]
    assert "gridDim.y = 1, never read" in kernel["assumptions"]


def test_row_merge_condition_in_text_after_the_message():
    code, out = text(str(FIX / "row_merge.cu"))
    assert code == 1
    line = next(x for x in out.splitlines() if "error[write-after-read]" in x)
    assert "reads it at line 6; races when -blockDim.y < H < blockDim.y and gridDim.x >= 2  kernel row_merge" in line
    assert "assumed: blockDim.z = 1, never read" in out


def test_assume_on_the_command_line_removes_the_conditional_race():
    code, report, _ = run(str(FIX / "row_merge.cu"), "--assume", "H >= blockDim.y")
    assert code == 0 and report["findings"] == []
    assert "H >= blockDim.y" in report["kernels"][0]["assumptions"]


def test_assume_line_in_the_source_removes_it_too():
    code, report, _ = run(str(FIX / "row_merge_fixed.cu"))
    assert code == 0 and report["findings"] == []
    assert "H >= blockDim.y" in report["kernels"][0]["assumptions"]


def test_an_assumption_does_not_hide_a_race_outside_it():
    """The tile store races within a block for |n| < 16 and between blocks for |n| < 16 * gridDim.x:
    `n >= 16` removes the first, not the second."""
    code, report, _ = run(str(FIX / "tile_store.cu"))
    assert code == 1
    block = [f for f in report["findings"] if "second_block" not in f["witness"]]
    grid = [f for f in report["findings"] if "second_block" in f["witness"]]
    assert [f["condition"] for f in block] == ["-15 <= n <= 15"] and block[0]["condition_exact"]
    assert len(grid) == 1 and "n < 16 * gridDim.x" in grid[0]["condition"]
    code, report, _ = run(str(FIX / "tile_store.cu"), "--assume", "n >= 16")
    assert code == 1
    assert [("second_block" in f["witness"]) for f in report["findings"]] == [True]
    code, report, _ = run(str(FIX / "tile_store_fixed.cu"))
    assert code == 0 and report["findings"] == []


def test_launch_bounds_are_a_fact():
    code, report, _ = run(str(FIX / "slots.cu"))
    assert code == 1
    assert [f["condition"] for f in report["findings"]] == ["blockDim.x >= 65"]
    code, report, _ = run(str(FIX / "slots_fixed.cu"))
    assert code == 0 and report["findings"] == []
    assert any("<= 64, from the source" in a for a in report["kernels"][0]["assumptions"])


def test_unread_block_dimension_is_one_unless_the_launch_says_otherwise():
    code, report, _ = run(str(FIX / "saxpy_2d_block.cu"))
    assert code == 0 and report["findings"] == []
    assert "blockDim.y = 1, never read" in report["kernels"][0]["assumptions"]
    code, report, _ = run(str(FIX / "saxpy_2d_block.cu"), "--block-dim", "32,2", "--scope", "block")
    assert code == 1
    assert {f["condition"] for f in report["findings"]} == {"n > 0"}
    assert "assumptions" not in report["kernels"][0] or not any(
        "blockDim" in a for a in report["kernels"][0]["assumptions"])


def test_race_freedom_says_what_it_assumed():
    """`--conditions` on a kernel clean only because an unread block dimension is 1 says so:
    with --block-dim 32,2 it races."""
    code, out = text(str(FIX / "saxpy_2d_block.cu"), "--conditions")
    assert code == 0
    line = next(x for x in out.splitlines() if x.startswith("kernel saxpy"))
    assert "race-free for every launch (assumed: blockDim.y = 1, never read" in line


def test_bad_assumption_is_one_line_exit_2():
    code, out = text(str(FIX / "row_merge.cu"), "--assume", "H >=")
    assert code == 2
    assert "Traceback" not in out and "expected a C expression" in out


def test_bad_assumption_line_in_the_source_names_the_place(tmp_path):
    src = tmp_path / "k.cu"
    src.write_text("// kernelrace: assume H >=\n__global__ void k(float* a, int H) { a[threadIdx.x] = H; }\n")
    code, out = text(str(src))
    assert code == 2 and f"{src}:1:" in out and "Traceback" not in out


def test_assumption_parse():
    a = assumptions.parse("0 < n <= 4096 && gridDim.x <= 32")
    assert a.names == {"n"}
    with pytest.raises(ValueError):
        assumptions.parse("n = 3")
    assert assumptions.looks_like_expression("H >= blockDim.y")
    assert not assumptions.looks_like_expression("indptr:nondecreasing")


def _threads(b, p):
    t1, t2 = z3.Ints("t1 t2")
    return [t1 >= 0, t1 < b, t2 >= 0, t2 < b, t1 != t2, t1 + p == t2]


def test_condition_of_a_linear_collision():
    b, p = z3.Int("blockDim.x"), z3.Int("P")
    domain = [b >= 1, b <= 1024, p >= -2**31, p <= 2**31 - 1]
    c = race_condition(_threads(b, p) + domain, domain, ["P", "blockDim.x"], {"P": 1, "blockDim.x": 2})
    assert c.exact and c.text == "-blockDim.x < P < 0 or 0 < P < blockDim.x"


def test_condition_of_a_product_with_a_parameter_is_bracketed():
    """Rows of H: thread values times a parameter, exact where the two projections agree."""
    h, by = z3.Int("H"), z3.Int("blockDim.y")
    b1, b2, y1, y2 = z3.Ints("b1 b2 y1 y2")
    cs = [b1 >= 0, b2 >= 0, b1 < 8, b2 < 8, b1 != b2, y1 >= 0, y1 < by, y2 >= 0, y2 < by,
          b1 * h + y1 == b2 * h + y2]
    domain = [by >= 1, by <= 1024, h >= 0, h <= 100]
    c = race_condition(cs + domain, domain, ["H", "blockDim.y"], {"H": 1, "blockDim.y": 2})
    assert c.exact and c.text == "H < blockDim.y"


def test_a_part_of_the_query_that_names_no_parameter_is_left_out():
    """Satisfiable, it holds for some values whatever the parameters: the bit operation of two
    thread values beside the collision leaves the projection exact (it was the witness's values)."""
    b, p = z3.Int("blockDim.x"), z3.Int("P")
    x, y = z3.Ints("x y")
    apart = [z3.BV2Int(z3.Int2BV(x, 8) & z3.Int2BV(y, 8)) == 3, x >= 0, y >= 0]
    domain = [b >= 1, b <= 1024, p >= -2**31, p <= 2**31 - 1]
    c = race_condition(_threads(b, p) + apart + domain, domain, ["P", "blockDim.x"], {"P": 1, "blockDim.x": 2})
    assert c.exact and c.text == "-blockDim.x < P < 0 or 0 < P < blockDim.x"


def test_condition_falls_back_to_the_witness_where_not_presburger():
    x, n = z3.Int("x"), z3.Int("n")
    cs = [z3.BV2Int(z3.Int2BV(x, 8) & z3.Int2BV(n, 8)) == 3]
    c = race_condition(cs, [], ["n"], {"n": 3})
    assert not c.exact and c.how == "witness" and c.text == "n=3"


def test_assume_in_the_check_configuration(tmp_path):
    (tmp_path / "row_merge.cu").write_text((FIX / "row_merge.cu").read_text())
    (tmp_path / "pyproject.toml").write_text('[tool.kernelrace.check]\nassume = ["H >= blockDim.y"]\n')
    root = Path(__file__).parent.parent
    p = subprocess.run([sys.executable, "-m", "analyzer.cli", "check", "--format", "json", "row_merge.cu"],
                       capture_output=True, text=True, cwd=tmp_path, env={**__import__("os").environ,
                                                                          "PYTHONPATH": str(root)})
    assert p.returncode == 0, p.stdout + p.stderr
    assert json.loads(p.stdout)["findings"] == []


def test_race_freedom_conditions_per_kernel():
    code, out = text(str(FIX / "tile_store.cu"), "--conditions", "--scope", "block", "--hints", "off")
    assert "kernel tile_store (" in out and "race-free when n < -15 or n > 15" in out
    code, report, _ = run(str(FIX / "slots_fixed.cu"), "--conditions")
    assert report["kernels"][0]["race_free_when"] == "race-free for every launch"
    # A sufficient race condition only gives a necessary race-freedom condition.
    code, report, _ = run(str(FIX / "tile_store.cu"), "--conditions", "--hints", "off")
    assert report["kernels"][0]["race_free_when"].startswith("race-free only if ")


@pytest.mark.parametrize("frontend", ["clang", "lark"])
def test_divergent_barrier_names_the_branch_not_a_stated_fact(frontend):
    code, report, err = run(str(FIX / "assume_then_branch.cu"), "--frontend", frontend)
    assert code == 1, err
    divergent = [f for f in report["findings"] if f["rule"] == "divergent-barrier"]
    # Only the barrier under the branch; the one under `__builtin_assume` alone is every thread's.
    assert [f["second"]["line"] for f in divergent] == [10]
    assert divergent[0]["first"]["line"] == 8
    w = divergent[0]["witness"]
    assert w["reaching_thread"] != w["skipping_thread"]


def test_a_converted_integer_parameter_is_its_integer():
    """`(float)p` of an `int p` holds p (integral_floats.py, `ir.Call.int_arg`): against `0.0f` the
    stores differ only where p != 0; `(float)scale` of a `double scale` holds no integer."""
    code, report, _ = run(str(FIX / "converted_parameter.cu"))
    conditions = {(f["second"]["buffer"], f["condition"]) for f in report["findings"] if f["rule"] == "write-after-write"}
    assert ("g", "p < 0 and 2 * p > -blockDim.z") in conditions
    assert not any(b == "g" and "p <= 0" in c for b, c in conditions)
    assert any(b == "h" and "p <= 0" in c for b, c in conditions)   # p == 0 included


def test_stores_of_one_unwritten_element_are_one_value():
    """The loads that only feed the stored values get the one-value facts too (unwritten.py): with
    one row of threads, no write reaches the element they load (it was 'races when P1 >= 2')."""
    code, report, _ = run(str(FIX / "one_element_values.cu"), "--block-dim", "2,1,1")
    assert code == 0 and report["findings"] == []
    code, report, _ = run(str(FIX / "one_element_values.cu"))
    waw = [f for f in report["findings"] if f["rule"] == "write-after-write" and f["second"]["buffer"] == "g2"]
    # (with the one-value facts in the projection, whose upper bracket may run out of ISL's budget:
    # then said as a sufficient condition)
    assert [f["condition"] for f in waw] == ["P1 > 0 and blockDim.y >= 2"]
