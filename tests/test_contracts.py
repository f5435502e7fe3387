"""Buffer contracts (analyzer/analysis/stated/contracts.py): --assume, [[tool.kernelrace.assume]],
--no-contracts and the built-in contracts of TVM's runtime, through the real CLI and Z3."""

import json

import pytest

# Three row pointers b = 0, 1, 2 (threadIdx.y), each row's elements strided over threadIdx.x: the
# rows meet only if indptr decreases somewhere (rows 0 and 2; neighbours share a bound, which
# keeps them apart whatever the values).
INDPTR = """__global__ void segments(const int* indptr, float* out, const float* x) {
  int b = threadIdx.y;
  for (int i = indptr[b] + threadIdx.x; i < indptr[b + 1]; i += blockDim.x) {
    out[i] = x[i] * 2.0f + b;
  }
}
"""
# A scatter through a map: two threads meet only if the map sends them to one slot.
SCATTER = """__global__ void scatter(const int* map, float* out, const float* x) {
  out[map[threadIdx.x]] = x[threadIdx.x];
}
"""
# Each thread owns 4 slots; the offset read from `pick` keeps it inside them only if it is in 0..3.
RANGE = """__global__ void pick4(const int* pick, float* out) {
  out[threadIdx.x * 4 + pick[threadIdx.x]] = (float)threadIdx.x;
}
"""

# A slot map whose -1 means "not stored" (TVM's append position map): the guard keeps -1 out.
SENTINEL = """__global__ void append(const int* slots, float* out, const float* x) {
  int p = slots[threadIdx.x];
  if (p != -1) {
    out[p] = x[threadIdx.x];
  }
}
"""
# Thread b walks segment b of indptr and scatters through pos (TVM's _compact_kv_copy): two threads
# meet only if two segments hold one value. PER_SEGMENT = 2 puts two threads on each segment.
SEGMENTS = """__global__ void scatter_segments(const int* indptr, const int* pos, float* out, const float* x) {
  int b = threadIdx.x / PER_SEGMENT;
  for (int i = indptr[b]; i < indptr[b + 1]; ++i) {
    out[pos[i]] = x[i] + b;
  }
}
"""


@pytest.fixture
def kernel(tmp_path):
    def write(name, text):
        path = tmp_path / name
        path.write_text(text)
        return str(path)
    return write


def _warnings(report):
    return [f for f in report["findings"] if f["severity"] in ("warning", "error")]


def test_indptr_race_without_the_contract_and_clean_with_nondecreasing(cli, kernel):
    path = kernel("segments.cu", INDPTR)
    code, report, _ = cli("check", path, "--block-dim", "2,3", "--format", "json")
    (f,) = _warnings(report)
    assert f["rule"] == "write-after-write" and f["second"]["buffer"] == "out"
    code, report, _ = cli("check", path, "--block-dim", "2,3", "--format", "json", "--assume", "indptr:nondecreasing")
    assert code == 0 and _warnings(report) == []
    assert report["contracts"] == [{"contract": "indptr:nondecreasing", "origin": "--assume", "in_force": True,
                                    "kernels": ["segments"]}]
    # A contract for another kernel does not apply.
    code, report, _ = cli("check", path, "--block-dim", "2,3", "--format", "json", "--assume",
                          "other/indptr:nondecreasing")
    assert len(_warnings(report)) == 1 and "contracts" not in report


def test_scatter_clean_only_with_distinct_and_range_is_no_substitute(cli, kernel):
    path = kernel("scatter.cu", SCATTER)
    assert len(_warnings(cli("check", path, "--block-dim", "64", "--format", "json")[1])) == 1
    code, report, _ = cli("check", path, "--block-dim", "64", "--format", "json", "--assume", "map:injective")
    assert code == 0 and _warnings(report) == []
    # Values in a range may still repeat.
    code, report, _ = cli("check", path, "--block-dim", "64", "--format", "json", "--assume", "map:range=0..63")
    assert len(_warnings(report)) == 1


def test_range_keeps_each_thread_inside_its_slots(cli, kernel):
    path = kernel("pick4.cu", RANGE)
    assert len(_warnings(cli("check", path, "--block-dim", "32", "--format", "json")[1])) == 1
    code, report, _ = cli("check", path, "--block-dim", "32", "--format", "json", "--assume", "pick:range=0..3")
    assert code == 0 and _warnings(report) == []
    # One value too many and the threads meet again.
    code, report, _ = cli("check", path, "--block-dim", "32", "--format", "json", "--assume", "pick:range=0..4")
    assert len(_warnings(report)) == 1


# Block b copies elements 256*b .. 256*b + 255 one element on: only threads with i < n run, so
# with n <= 256 only block 0 does, and nothing reads what another block writes.
SHIFT = """__global__ void shift(float* a, int n) {
  int i = blockIdx.x * 256 + threadIdx.x;
  if (i < n) a[i + 256] = a[i];
}
"""


def test_range_on_a_scalar_parameter_bounds_its_value(cli, kernel):
    path = kernel("shift.cu", SHIFT)
    args = ("check", path, "--block-dim", "256", "--format", "json", "--no-cache")
    (f,) = _warnings(cli(*args)[1])
    assert f["rule"] == "write-after-read" and f["witness"]["params"]["n"] > 256
    code, report, _ = cli(*args, "--assume", "n:range=0..256")
    assert code == 0 and _warnings(report) == []
    assert report["contracts"][0]["contract"] == "n:range=0..256"
    # One more element and block 1's first thread reads what block 0's first thread writes.
    (f,) = _warnings(cli(*args, "--assume", "n:range=0..257")[1])
    assert f["witness"]["params"]["n"] == 257
    code, out, _ = cli("check", path, "--block-dim", "256", "-v", "--no-cache", "--assume", "n:range=0..256")
    assert ("the read at line 3 and the write at line 3 on a never collide only because of the contract "
            "n:range=0..256 (threads of two blocks)") in out


def test_builtin_contract_of_the_single_page_copy(cli):
    """TVM copies a page's used slots only, 1..page_size-1 of them (paged_kv_cache.cc ForkSequence).
    At head_dim 64 on CUDA a block copies a whole page, so only a copy_length above page_size would
    run a second block, whose writes could reach the page the first reads: an error without the
    built-in `copy_length:range=1..16`, which names it."""
    args = ("lint", "tvm.relax.frontend.nn.llm._page_kernels:_copy_single_page_mla", "--param", "page_size=16",
            "--param", "head_dim=64", "--param", "dtype=float16", "--target", "cuda", "--jobs", "1",
            "--format", "json", "--no-cache")
    code, report, _ = cli(*args)
    assert code == 0 and _warnings(report) == []
    assert [c["contract"] for c in report["contracts"]] == ["copy_length:range=1..16"]
    code, report, _ = cli(*args, "--no-contracts")
    (f,) = _warnings(report)
    assert f["severity"] == "error" and f["second"]["buffer"] == "pages"
    assert f["witness"]["refuted_by_contracts"] == ["copy_length:range=1..16"]


def test_no_contracts_brings_the_finding_back_naming_the_contract(cli, kernel):
    path = kernel("segments.cu", INDPTR)
    code, report, _ = cli("check", path, "--block-dim", "2,3", "--format", "json", "--assume", "indptr:nondecreasing",
                          "--no-contracts")
    (f,) = _warnings(report)
    assert any("indptr:nondecreasing, turned off by --no-contracts" in n for n in f["notes"])
    assert f["witness"]["refuted_by_contracts"] == ["indptr:nondecreasing"]
    assert report["contracts"][0]["in_force"] is False


def test_verbose_lists_contracts_and_the_pairs_they_keep_apart(cli, kernel):
    path = kernel("segments.cu", INDPTR)
    code, out, _ = cli("check", path, "--block-dim", "2,3", "-v", "--assume", "indptr:nondecreasing")
    assert code == 0
    assert "contract: indptr:nondecreasing, in force, from --assume" in out
    assert ("assumed: the write at line 4 and the write at line 4 on out never collide only because of the "
            "contract indptr:nondecreasing") in out


def test_sarif_run_properties_list_the_contracts(cli, kernel):
    path = kernel("segments.cu", INDPTR)
    code, out, _ = cli("check", path, "--block-dim", "2,3", "--format", "sarif", "--assume", "indptr:nondecreasing")
    props = json.loads(out)["runs"][0]["properties"]
    assert props["contracts"][0]["contract"] == "indptr:nondecreasing"


def test_distinct_except_the_sentinel_the_kernel_guards(cli, kernel):
    path = kernel("append.cu", SENTINEL)
    assert len(_warnings(cli("check", path, "--block-dim", "64", "--format", "json")[1])) == 1
    code, report, _ = cli("check", path, "--block-dim", "64", "--format", "json", "--assume",
                          "slots:distinct-except(-1)")
    assert code == 0 and _warnings(report) == []
    assert report["contracts"][0]["contract"] == "slots:distinct-except(-1)"
    # Another sentinel: two threads may both hold -1, which the guard does not keep out.
    code, report, _ = cli("check", path, "--block-dim", "64", "--format", "json", "--assume",
                          "slots:distinct-except(0)")
    assert len(_warnings(report)) == 1
    # Without the guard, the threads holding -1 both store to out[-1]: the contract allows that.
    unguarded = kernel("unguarded.cu", SENTINEL.replace("if (p != -1)", "if (true)"))
    code, report, _ = cli("check", unguarded, "--block-dim", "64", "--format", "json", "--assume",
                          "slots:distinct-except(-1)")
    (f,) = _warnings(report)
    assert f["second"]["buffer"] == "out"


def test_distinct_across_segments_refutes_only_threads_of_different_segments(cli, kernel):
    one = kernel("one.cu", "#define PER_SEGMENT 1\n" + SEGMENTS)
    assert len(_warnings(cli("check", one, "--block-dim", "8", "--format", "json")[1])) == 1
    # distinct alone is not what the runtime gives; distinct-across is enough here.
    code, out, _ = cli("check", one, "--block-dim", "8", "-v", "--assume", "pos:distinct-across(indptr)")
    assert code == 0
    assert "contract: pos:distinct-across(indptr), in force, from --assume" in out
    assert "never collide only because of the contract pos:distinct-across(indptr)" in out
    # Two threads on one segment store to the same slots whatever pos holds: still a race.
    two = kernel("two.cu", "#define PER_SEGMENT 2\n" + SEGMENTS)
    code, report, _ = cli("check", two, "--block-dim", "8", "--format", "json", "--assume",
                          "pos:distinct-across(indptr)", "--assume", "indptr:nondecreasing")
    (f,) = _warnings(report)
    assert f["second"]["buffer"] == "out"
    # --no-contracts: the finding again, naming the contract.
    code, report, _ = cli("check", one, "--block-dim", "8", "--format", "json", "--assume",
                          "pos:distinct-across(indptr)", "--no-contracts")
    (f,) = _warnings(report)
    assert f["witness"]["refuted_by_contracts"] == ["pos:distinct-across(indptr)"]


def test_distinct_across_an_indptr_the_kernel_writes_is_an_error(cli, kernel):
    path = kernel("segments.cu", INDPTR)
    code, out, err = cli("check", path, "--block-dim", "2,3", "--assume", "x:distinct-across(out)")
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert "kernel segments writes out" in err


@pytest.mark.parametrize("bad, why", [
    ("pos:distinct-across(pos)", "naming another buffer"),
    ("pos:distinct-across()", "naming another buffer"),
    ("pos:distinct-except(minus one)", "distinct-except(VALUE) of an integer"),
    ("pos:distinct-except=-1", "unknown property"),
    ("pos:sorted(indptr)", "unknown property"),
    ("indptr", "expected [KERNEL/]BUFFER:PROPERTY"),
    ("indptr:sorted", "unknown property 'sorted'"),
    ("indptr:range=3..1", "LO <= HI"),
    ("indptr:range=a..b", "range=LO..HI of integers"),
    ("indptr:nondecreasing=1", "unknown property"),
])
def test_bad_contract_is_one_line_exit_2(capsys, kernel, bad, why):
    from analyzer.cli import main

    with pytest.raises(SystemExit) as exc:   # a usage error, as argparse reports them
        main(["check", kernel("segments.cu", INDPTR), "--assume", bad])
    err = capsys.readouterr().err
    assert exc.value.code == 2 and len(err.strip().splitlines()) == 1 and why in err


def test_contract_on_a_written_buffer_is_an_error(cli, kernel):
    path = kernel("segments.cu", INDPTR)
    code, out, err = cli("check", path, "--block-dim", "2,3", "--assume", "out:distinct")
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert "kernel segments writes out" in err


def test_configuration_assume_tables(cli, kernel, tmp_path, monkeypatch):
    path = kernel("segments.cu", INDPTR)
    (tmp_path / ".git").mkdir()
    monkeypatch.chdir(tmp_path)
    (tmp_path / "kernelrace.toml").write_text(
        '[[assume]]\nkernel = "segments"\nbuffer = "indptr"\nproperty = "nondecreasing"\n'
        'reason = "built by a prefix sum on the host"\n')
    code, report, _ = cli("check", path, "--block-dim", "2,3", "--format", "json")
    assert code == 0 and _warnings(report) == []
    assert report["contracts"][0]["contract"] == "segments/indptr:nondecreasing"
    assert report["contracts"][0]["origin"] == "kernelrace.toml [[assume]] entry 1"
    (tmp_path / "kernelrace.toml").write_text(
        '[[assume]]\nbuffer = "map"\nproperty = "distinct-except(-1)"\n')
    code, report, _ = cli("check", kernel("scatter.cu", SCATTER), "--block-dim", "64", "--format", "json")
    assert report["contracts"][0]["contract"] == "map:distinct-except(-1)" and len(_warnings(report)) == 1
    (tmp_path / "kernelrace.toml").write_text('[[assume]]\nbuffer = "indptr"\nproperty = "sorted"\n')
    code, out, err = cli("check", path, "--block-dim", "2,3")
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert "kernelrace.toml: [[assume]] entry 1 'indptr:sorted': unknown property 'sorted'" in err
    (tmp_path / "kernelrace.toml").write_text('[[assume]]\nbuffer = "indptr"\nproprety = "nondecreasing"\n')
    code, out, err = cli("check", path, "--block-dim", "2,3")
    assert code == 2 and "unknown key 'proprety' (did you mean 'property'?)" in err


def test_builtin_contract_of_the_sampler_and_no_contracts(cli):
    """TVM's generic_get_sample_index reads a row-wise cumulative sum (dispatch_sampling.py): with
    the built-in `prob:nondecreasing` its output_index collisions are refuted; without, they are
    warnings naming the contract."""
    args = ("llm", "--num-qo-heads", "32", "--num-kv-heads", "8", "--head-dim", "128", "--target", "cuda",
            "--only", "generic_get_sample_index", "--jobs", "1", "--format", "json")
    code, report, _ = cli(*args)
    assert report["summary"]["warnings"] == 0 and report["summary"]["errors"] == 0
    (c,) = report["contracts"]
    assert c["contract"] == "prob:nondecreasing" and c["origin"].startswith("built in")
    code, report, _ = cli(*args, "--no-contracts")
    found = _warnings(report)
    assert found and all(f["second"]["buffer"] == "output_index" for f in found)
    assert all(any("prob:nondecreasing, turned off" in n for n in f["notes"]) for f in found)


def test_builtin_contracts_of_the_kv_append_and_the_tree_commit_copy(cli):
    """TVM's _kv_cache_transpose_append stores through append_position_map, distinct but for the
    -1 of a sink-pinned slot, which its guard skips; _compact_kv_copy copies between slots of one
    sequence per segment of copy_length_indptr, and sequences own different slots
    (paged_kv_cache.cc). With the built-in contracts both are clean; without, their warnings on
    `pages` name the contracts."""
    args = ("llm", "--num-qo-heads", "8", "--num-kv-heads", "2", "--head-dim", "64", "--target", "cuda",
            "--only", "compact,transpose_append", "--jobs", "1", "--format", "json")
    code, report, _ = cli(*args)
    assert report["summary"]["warnings"] == 0 and report["summary"]["errors"] == 0
    assert {c["contract"] for c in report["contracts"]} == {
        "copy_length_indptr:nondecreasing", "copy_src_dst_pos:distinct-across(copy_length_indptr)",
        "position_map:distinct-except(-1)"}
    code, report, _ = cli(*args, "--no-contracts")
    found = _warnings(report)
    kernels = {f["kernel"] for f in found}
    assert kernels == {"compact_kv_copy_kernel", "tir_kv_cache_transpose_append_kernel"}
    assert all(f["second"]["buffer"] == "pages" for f in found)
    for f in found:
        named = f["witness"]["refuted_by_contracts"]
        assert ("copy_src_dst_pos:distinct-across(copy_length_indptr)" in named if f["kernel"].startswith("compact")
                else named == ["position_map:distinct-except(-1)"])


def test_split_of_an_undecided_refinement_is_on_two_columns_that_vary():
    """The case split (races.py CONTRACT_SPLITS) is on the first two in-bounds columns whose
    difference is not a constant: `b` against `b + 1` is decided already, `b1` against `b2` is
    what order facts turn on."""
    import z3

    from analyzer.analysis.stated.contracts import ContractFacts

    b1, b2, n = z3.Ints("b1 b2 n")
    yes = z3.BoolVal(True)
    keys = [(0, b1, yes), (0, b1 + 1, yes), (0, b2, z3.BoolVal(False)), (0, b2 + 1, b2 + 1 < n)]
    c1, c2 = ContractFacts._split(keys)
    assert c1.eq(b1) and c2.eq(b2 + 1)
    assert ContractFacts._split(keys[:2]) is None
