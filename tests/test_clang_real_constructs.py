"""The clang front end on constructs met in real CUDA and OpenCL files (issue 41), each on a fixture of
its own (tests/clang/): a local reference bound through a reference cast, a helper's parameter
declared as an array, names qualified by a namespace of a header not found, a class clang cannot read
whole, curand's Sobol generators, and Tensor Core fragments."""

import json
from pathlib import Path

from analyzer import ir
from analyzer.frontend.clang import lower_clang
from conftest import cli_in_process

HERE = Path(__file__).parent / "clang"


def check(name: str, *args: str) -> tuple[int, dict | None, str]:
    code, out, err = cli_in_process(["check", str(HERE / name), "--format", "json", "--timeout", "5", *args])
    return code, (json.loads(out) if code in (0, 1) else None), err


def races(report: dict) -> set[tuple[str, str, int, int]]:
    return {(f["kernel"], f["rule"], f["first"]["line"], f["second"]["line"]) for f in report["findings"]
            if f["rule"] != "unknown"}


def lowered(name: str):
    path = HERE / name
    lang = {".cu": "cuda", ".cl": "opencl"}[path.suffix]
    return lower_clang(path.read_text(), lang, str(path))


def test_a_local_reference_through_a_reference_cast_is_the_memory_it_names():
    kernels, _ = lowered("local_reference_cast.cu")
    assert not any(k.unsupported for k in kernels)
    code, report, err = check("local_reference_cast.cu", "--frontend", "clang", "--block-dim", "256")
    assert code == 1, err
    # read where the reference is used (line 19, after the write of line 17), written through at 34
    assert races(report) == {("neighbour", "read-after-write", 17, 19),
                             ("first_of_all", "write-after-write", 34, 34)}


def test_a_parameter_declared_as_an_array_is_a_pointer_to_the_callers_array():
    kernels, _ = lowered("array_param.cl")
    assert not any(k.unsupported for k in kernels)
    code, report, err = check("array_param.cl", "--frontend", "clang", "--block-dim", "64")
    assert code == 1, err
    assert races(report) == {("rotate", "write-after-read", 18, 18)}


def test_a_namespace_of_a_missing_header_is_never_a_build_macro():
    code, report, err = check("missing_namespace.cu", "--block-dim", "64")   # auto: Lark cannot read it
    assert code == 0, err
    assert "symbolic parameter" not in err and "'std'" not in err
    status = {k["kernel"]: k["status"] for k in report["kernels"]}
    assert status == {"scale": "clean", "from_library": "unknown", "with_broken_class": "unknown"}
    why = {f["kernel"]: f["message"] for f in report["findings"] if f["rule"] == "unknown"}
    assert "'mylib'" in why["from_library"]
    assert "declaration of 'Creator'" in why["with_broken_class"]


def test_sobol_generators_read_their_direction_vectors():
    kernels, _ = lowered("curand_sobol.cu")
    assert not any(k.unsupported for k in kernels)
    code, report, err = check("curand_sobol.cu", "--frontend", "clang", "--block-dim", "64")
    assert code == 1, err
    assert {(k, r) for k, r, _, _ in races(report)} == {("init_while_written", "read-after-write")}


def test_members_of_two_struct_arguments_are_different_parameters():
    kernels, _ = lowered("struct_arg_members.cu")
    assert {"a.o", "b.o"} <= set(kernels[0].params) and {"a.o", "o"} <= set(kernels[1].params)
    code, report, err = check("struct_arg_members.cu", "--frontend", "clang", "--block-dim", "64")
    assert code == 1, err
    # (before: both `.o` were one parameter `o`, and the first two kernels were clean)
    assert {k for k, _, _, _ in races(report)} == {"two_structs", "struct_and_scalar"}


def test_a_template_helpers_element_type_is_its_arguments():
    code, report, err = check("template_element_size.cu", "--frontend", "clang", "--block-dim", "64")
    assert code == 1, err
    # 8-byte elements: thread i's own upper half is no other thread's (before: 4-byte `float`s, a race)
    assert {(k, first, second) for k, _, first, second in races(report)} == {("next_element", 5, 19)}


def test_fp8_structs_filled_from_a_struct_argument_and_copied():
    code, report, err = check("fp8_values.cu", "--frontend", "clang", "--block-dim", "64")
    assert code == 1, err
    status = {k["kernel"]: k["status"] for k in report["kernels"]}
    assert status == {"fill_fp8": "clean", "copy_fp8": "clean", "neighbour_fp8": "findings", "to_float": "unknown"}
    assert {(k, first, second) for k, _, first, second in races(report)} == {("neighbour_fp8", 22, 23)}


def test_a_namespace_qualified_template_call_in_a_template_kernel():
    code, report, err = check("qualified_template_call.cu", "--frontend", "clang", "--block-dim", "256")
    assert code == 1, err
    # (before: `tile::` was read as the first template argument, and both kernels were refused)
    assert {(k, first, second) for k, _, first, second in races(report)} == {("stage_unsynced", 6, 23)}


def test_a_member_of_a_thread_blocks_index_vector_read_off_the_call():
    code, report, err = check("group_index_call.cu", "--frontend", "clang")
    assert code == 1, err
    # (before: `block.dim_threads().x` in a template kernel was `member '.x'`, both kernels unknown)
    assert {(k, first, second) for k, _, first, second in races(report)} == {("short_rows", 16, 16)}


def test_auto_takes_clangs_reading_where_lark_leaves_more_kernels_unknown():
    code, report, err = check("build_macro_rows.cl")   # auto
    assert code == 1, err
    # (before: Lark's reading, its two kernels with LROWS `unknown`)
    assert {k["kernel"]: k["status"] for k in report["kernels"]} == {
        "rows": "clean", "rows_overlap": "findings", "copy": "clean"}
    assert "LROWS" in err   # the note: a symbolic parameter, give it with -D


def test_a_build_macro_inside_another_macros_definition_is_a_number():
    """shoc's `#define idx2(p, z) (p[((z) - 1) * (N_GP) + thread_num])`, invoked as `WDOT(21)`: the
    undefined name was judged by the invocation's text (a call) and declared a function, and clang
    stopped on "taking address of function"; it is read where the definition spells it, a number,
    and becomes a symbolic parameter."""
    code, report, err = check("build_macro_in_macro.cl")   # auto
    assert code == 1, err
    assert {k["kernel"]: k["status"] for k in report["kernels"]} == {"rows_apart": "clean", "rows_unguarded": "findings"}
    assert "-D NROWS=VALUE" in err
    assert all("NROWS" in f["condition"] for f in report["findings"] if f["kernel"] == "rows_unguarded")


def test_vector_components_spelled_in_a_macros_definition():
    """llama.cpp's `dequantizeBlockAccum_ns_sgbroadcast_1_hi(totalSum, ..., regB)` doing `y.s0` and
    `total_sums.s1 +=` in its definition: the accessor was read from the invocation's text
    ("vector component '.dequantize...(...)'"); it is read from the definition, in order, and checked
    against each component's lane count. A macro defined twice stays unknown. Two number literals of
    one expansion are two values (they were one: `p[0] = 1.0f; p[0] = 2.0f;` was clean)."""
    code, report, err = check("macro_vector_accessors.cl", "--frontend", "clang", "--block-dim", "64")
    assert code == 1, err
    assert {k["kernel"]: k["status"] for k in report["kernels"]} == {
        "at_x": "clean", "at_y": "findings", "summed": "findings", "two_values": "findings", "halves": "clean",
        "picked": "unknown"}
    assert {(k, first, second) for k, _, first, second in races(report)} == {
        ("at_y", 19, 19), ("summed", 26, 27), ("two_values", 32, 32)}


def test_a_work_group_size_from_build_macros():
    """MNN's `reqd_work_group_size(MDIMC, NDIMC, 1)` with the macros undefined was a refusal
    ("not three positive constants"), and with `-D MDIMC=16` too (the attribute's text was looked up
    in the file only): undefined, the block's extent is the symbolic parameter; given, the number."""
    code, report, err = check("work_group_size_macro.cl")
    assert code == 1, err
    assert {k["kernel"]: k["status"] for k in report["kernels"]} == {"tiles_sized": "clean", "tiles_unsized": "findings"}
    kernels, _ = lowered("work_group_size_macro.cl")
    (sized,) = [k for k in kernels if k.name == "tiles_sized"]
    assert [text for text, _ in sized.assumptions] == ["blockDim.x = WX, from reqd_work_group_size"]
    code, report, err = check("work_group_size_macro.cl", "-D", "WX=64")
    assert code == 1, err
    assert {k["kernel"]: k["status"] for k in report["kernels"]} == {"tiles_sized": "clean", "tiles_unsized": "findings"}
    assert {f["condition"] for f in report["findings"] if f["kernel"] == "tiles_unsized"} == {
        "blockDim.x >= 65 and gridDim.x >= 2"}


def test_lanes_of_vectors_in_memory_written_one_by_one():
    kernels, _ = lowered("vector_lane_stores.cl")
    assert not any(k.unsupported for k in kernels)   # (before: "memory access through a non-pointer")
    code, report, err = check("vector_lane_stores.cl", "--frontend", "clang", "--block-dim", "64")
    assert code == 1, err
    assert {(k, first, second) for k, _, first, second in races(report)} == {("next_x", 28, 29)}


def test_vector_components_inside_a_macros_argument():
    code, report, err = check("macro_vector_lanes.cl", "--frontend", "clang", "--block-dim", "64")
    assert code == 1, err
    # (before: `ID(t.yx)` was read as `t`, whole: the race of `swapped` was missed, the others were
    # false alarms)
    assert {k["kernel"]: k["status"] for k in report["kernels"]} == {
        "swapped": "findings", "swapped_own": "clean", "lane_in_macro": "clean"}


def test_tensor_core_fragments_load_and_store_tiles_with_a_leading_dimension():
    code, report, err = check("wmma_tiles.cu", "--block-dim", "128")
    assert code == 1, err
    status = {k["kernel"]: k["status"] for k in report["kernels"]}
    assert status == {"own_tiles": "clean", "one_tile_for_all": "findings", "side_by_side": "clean",
                      "side_by_side_narrow": "findings", "readback_without_syncwarp": "findings",
                      "readback_after_syncwarp": "clean", "template_tiles<half, 16>": "clean",
                      "every_block": "findings", "one_bit": "unknown"}
    assert races(report) == {("one_tile_for_all", "write-after-write", 34, 34),
                             ("side_by_side_narrow", "write-after-write", 50, 50),
                             ("readback_without_syncwarp", "read-after-write", 59, 60),
                             ("every_block", "write-after-write", 96, 96)}   # (between blocks)
    unknown = [f["message"] for f in report["findings"] if f["rule"] == "unknown"]
    assert len(unknown) == 1 and "sub-byte precision" in unknown[0]
    # the fragment's registers take unknown values, the tile's elements are accessed, never nothing
    kernels = {k.name: k for k in lowered("wmma_tiles.cu")[0]}
    body = repr(kernels["own_tiles"].body)
    assert body.count("is_write=True") >= 4 and "why='mma_sync result'" in body


def test_kernels_of_a_library_not_bundled_are_unknown_naming_its_header(tmp_path):
    code, report, err = check("library_not_bundled.cu")
    assert code == 0, err   # never exit 2 for the file
    assert [k["status"] for k in report["kernels"]] == ["unknown", "unknown"]
    for f in report["findings"]:
        assert f["rule"] == "unknown" and "tilelib/tensor.hpp not found" in f["message"]
    # with every header found, a file none of whose kernels is read stays one line, exit 2
    only = tmp_path / "one_bit.cu"
    only.write_text("#include <mma.h>\nusing namespace nvcuda;\n__global__ void one_bit(const unsigned *a) {\n"
                    "    wmma::fragment<wmma::matrix_a, 8, 8, 128, wmma::experimental::precision::b1,"
                    " wmma::row_major> fa;\n    wmma::load_matrix_sync(fa, a, 128);\n}\n")
    code, _, err = cli_in_process(["check", str(only), "--frontend", "clang"])
    assert code == 2 and "sub-byte precision" in err


def test_fp8_values_built_from_numbers_and_stored():
    code, report, err = check("fp8_conversions.cu")
    assert code == 1, err
    assert {k["kernel"]: k["status"] for k in report["kernels"]} == {
        "from_half": "clean", "from_float": "clean", "halved": "findings"}
    assert {r[:2] for r in races(report)} == {("halved", "write-after-write")}


def test_half2_and_bfloat162_constructors_give_their_members_the_arguments():
    code, report, err = check("half2_constructor.cu")
    assert code == 1, err
    assert {k["kernel"]: k["status"] for k in report["kernels"]} == {
        "pairs": "clean", "never": "clean", "always": "findings"}
    assert races(report) == {("always", "write-after-write", 29, 31)}


def test_cub_block_collectives_write_read_their_storage_around_a_barrier():
    code, report, err = check("cub_collectives.cu", "--block-dim", "128")
    assert code == 1, err
    assert {k["kernel"]: k["status"] for k in report["kernels"]} == {
        "block_sum": "clean", "two_sums<128>": "clean", "reused_storage": "findings", "pair_scan": "clean",
        "half_the_block": "findings"}
    assert races(report) == {("reused_storage", "write-after-read", 40, 41),
                             ("half_the_block", "write-after-write", 61, 61),
                             ("half_the_block", "divergent-barrier", 60, 61)}
    kernels = {k.name: k for k in lowered("cub_collectives.cu")[0]}
    assert "cub::BlockReduce::Sum" in repr(kernels["block_sum"].body)   # the collective's barrier


def test_a_local_function_pointer_is_unknown_naming_it(tmp_path):
    src = tmp_path / "fp.cu"
    src.write_text("typedef float (*op_t)(float);\n__device__ float twice(float x) { return 2 * x; }\n"
                   "__device__ op_t pick(int k) { return twice; }\n"
                   "__global__ void apply(float *x) { op_t f = pick(0); x[threadIdx.x] = f(x[threadIdx.x]); }\n"
                   "__global__ void plain(float *x) { x[threadIdx.x] = 0.0f; }\n")
    code, out, err = cli_in_process(["check", str(src), "--format", "json", "--frontend", "clang"])
    report = json.loads(out)
    unknown = [f["message"] for f in report["findings"] if f["rule"] == "unknown"]
    assert code == 0 and len(unknown) == 1 and "a function pointer" in unknown[0], err


def test_matrix_elements_stored_by_two_blocks_are_never_taken_equal():
    # (a stored element was a function of the warp index and the element alone: every block's
    # first warp stored "the same value", and the race between blocks was a benign one)
    code, report, err = check("metal_simdgroup_every_group.metal", "--block-dim", "64")
    assert code == 1, err
    assert {k["kernel"]: k["status"] for k in report["kernels"]} == {"every_group": "findings", "own_tile": "clean"}
    assert races(report) == {("every_group", "write-after-write", 12, 12)}


def test_a_pointer_chosen_between_two_buffers_reaches_the_one_its_condition_picks():
    # once `pointer initialised from a non-pointer value`; the accesses are guarded by the choice,
    # made where the pointer is (a later change of `w` does not move it)
    kernels, _ = lowered("chosen_pointer.cu")
    assert not any(k.unsupported for k in kernels)
    code, report, err = check("chosen_pointer.cu", "--block-dim", "128", "--grid-dim", "4")
    assert code == 1, err
    assert races(report) == {("write_chosen", "write-after-write", 24, 24)}
    assert all(f["message"].startswith("write to b[") for f in report["findings"])   # never a: it is the block's own
    status = {k["kernel"]: k["status"] for k in report["kernels"]}
    assert status["stage_both"] == status["write_split"] == "clean"


def test_a_header_with_no_kernel_is_said_so_not_a_syntax_error_of_lark():
    # auto: Lark cannot read the header's C++ (`namespace a::b`), clang reads all of it and finds no
    # kernel: that is the file's one line (alone: exit 2, nothing analysed; in a directory: an
    # `unknown` entry, and the kernel beside it is checked)
    code, _, err = check("headers_only/device_helpers.cuh")
    assert code == 2 and "no kernel found (no __global__ function)" in err and "syntax error" not in err, err
    code, report, err = check("headers_only", "--block-dim", "64")
    assert code == 0, err
    assert {k["kernel"]: k["status"] for k in report["kernels"]} == {"scale": "clean", "": "unknown"}
    why = [f["message"] for f in report["findings"] if f["rule"] == "unknown"]
    assert why == ["not analysed: no kernel found (no __global__ function)"], why


def test_an_inner_dimension_sized_by_a_template_parameter_is_symbolic():
    # once `array dimension that is not a constant`: `tile[STAGES][32][32 + PAD]` of a template no
    # launch instantiates; each row is 32 + PAD elements (the expression innermost clang gives first)
    kernels, _ = lowered("symbolic_rows.cu")
    why = {k.name: k.unsupported[1] if k.unsupported else None for k in kernels}
    assert why == {"transpose_tile": None, "transpose_unsynced": None, "transpose_cells":
                   "array of 'Cell', of a size clang does not know, with a symbolic row"}
    assert all(k.buffers["tile"].size_bytes is None for k in kernels if not k.unsupported)   # no bound on it
    args = ("--block-dim", "32,32", "--grid-dim", "4")
    code, report, err = check("symbolic_rows.cu", *args, "--assume", "PAD >= 0", "--assume", "STAGES > 0")
    assert code == 1, err
    assert races(report) == {("transpose_unsynced", "read-after-write", 19, 20)}
    # a negative padding makes rows overlap: the stores of one stage collide, said by its condition
    code, report, err = check("symbolic_rows.cu", *args)
    assert ("transpose_tile", "write-after-write", 8, 8) in races(report)
    assert all("PAD" in f["condition"] for f in report["findings"] if f["kernel"] == "transpose_tile")


def test_memset_writes_its_bytes():
    # memset was a header function without effects (its stores unseen), and inside a template, on
    # an array of the template's type, `call of '' with a pointer argument`
    kernels, _ = lowered("memset_bytes.cu")
    assert not any(k.unsupported for k in kernels)
    code, report, err = check("memset_bytes.cu", "--block-dim", "256")
    assert code == 1, err
    assert races(report) == {("clear_overlapping", "write-after-write", 8, 8)}
    assert not any(f["rule"] == "redundant-barrier" and f["kernel"] == "clear_own" for f in report["findings"])


def test_memset_no_header_declares_is_the_c_librarys_as_under_nvcc():
    kernels, _ = lowered("memset_nvcc.cu")
    assert not any(k.unsupported for k in kernels)
    code, report, err = check("memset_nvcc.cu", "--block-dim", "128")
    assert code == 1, err
    assert races(report) == {("clear_shared", "write-after-write", 16, 16)}


def test_an_array_of_fragments_of_a_templates_type_holds_each_lanes_elements():
    # once `fill_fragment of a fragment that is no local variable or element of a local array`: each
    # fragment of `acc[2][2]` is a row of the lane's elements, 16 (their bound) where M, N are symbolic
    kernels, _ = lowered("fragment_arrays.cu")
    assert not any(k.unsupported for k in kernels)
    acc = kernels[0].buffers["acc"]
    assert (acc.space, acc.elem_type, acc.size_bytes) == ("private", "half", 2 * 2 * 16 * 2)
    shape = [a for n in "MNK" for a in ("--assume", f"{n} == 16")]
    code, report, err = check("fragment_arrays.cu", "--block-dim", "128", "--grid-dim", "1", *shape)
    assert code == 1, err
    assert races(report) == {("same_tiles", "write-after-write", 37, 37)}
    assert {k["kernel"]: k["status"] for k in report["kernels"]}["own_tiles"] == "clean"


def test_a_file_the_build_includes_is_read_as_its_includer_sees_it():
    # cells.cu uses `Cell` and `TILE`, which app.cu declares before including work.cu, which
    # includes it (rodinia, Parboil): read alone, every kernel was clang's error
    code, report, err = check("includer/cells.cu", "--block-dim", "64")
    assert code == 1, err
    assert "read as" in err and "work.cu:3 includes it" in err
    status = {k["kernel"]: k["status"] for k in report["kernels"]}
    # the includer's other kernel file is not this file's
    assert status == {"spread": "clean", "other_field": "clean", "same_field": "findings"}
    assert races(report) == {("same_field", "write-after-read", 23, 23)}
    # the tile size is app.cu's 64, not a parameter: past 64 threads, blocks overlap
    code, report, err = check("includer/cells.cu", "--block-dim", "65", "--grid-dim", "2")
    assert code == 1 and "spread" in {k for k, _, _, _ in races(report)}


def test_a_builtin_index_vector_passed_whole_is_the_launchs():
    # `q.reset(threadIdx.x, blockDim)`, `flat(threadIdx, blockDim)` (Parboil's bfs): the callee's
    # copy reads the launch's values (before: "a builtin index vector used as a number", exit 2)
    kernels, _ = lowered("index_vector_args.cu")
    assert not any(k.unsupported for k in kernels)
    code, report, err = check("index_vector_args.cu", "--block-dim", "16,16")
    assert code == 1, err
    assert {k["kernel"]: k["status"] for k in report["kernels"]} == {"own_slots": "clean", "transposed": "findings"}
    assert races(report) == {("transposed", "write-after-read", 31, 31)}


def test_a_floating_point_constant_at_file_scope_is_its_value():
    # (before: "'SCALE', a file-scope variable of the host", exit 2; mlx's F8E4M3_MAX)
    code, report, err = check("constexpr_float.cu", "--block-dim", "64")
    assert code == 1, err
    status = {k["kernel"]: k["status"] for k in report["kernels"]}
    assert status == {"scaled": "clean", "same_constant": "clean", "constant_or_not": "findings"}
    assert races(report) == {("constant_or_not", "write-after-write", 18, 18)}


def test_the_grids_index_vectors_through_its_group():
    # `grid.block_index()`, `grid.dim_blocks()` (mlx; before: clang's "no member named" in our
    # header, every kernel unknown)
    code, report, err = check("grid_block_index.cu", "--block-dim", "32")
    assert code == 1, err
    assert {k["kernel"]: k["status"] for k in report["kernels"]} == {"blocks": "clean", "short_rows": "findings"}
    assert races(report) == {("short_rows", "write-after-write", 18, 18)}


def test_local_copies_of_the_index_vectors_are_the_launchs():
    # Soundness: `auto size = block.dim_threads();` left the copy's members unset, so the kernel read
    # as never reading blockDim and was checked with one thread a block: `saved_sizes_unsynced` was
    # clean and `saved_sizes`'s barrier "redundant"; `dim3 b = blockDim;` was unknown
    code, report, err = check("index_vector_locals.cu")
    assert code == 1, err
    assert {k["kernel"]: k["status"] for k in report["kernels"]} == {
        "saved_sizes": "clean", "saved_sizes_unsynced": "findings", "copies": "clean", "copies_short": "findings"}
    assert races(report) == {("saved_sizes_unsynced", "read-after-write", 22, 23),
                             ("copies_short", "write-after-write", 37, 37)}
    assert not any(f["rule"] == "redundant-barrier" for f in report["findings"])


def test_arrays_inside_a_const_struct_argument_are_its_bytes():
    # `shape.data()`, `shape[i]` of a `const cuda::std::array` argument (mlx), `d.n[1]` of a const
    # struct of our own: before, "call of member function 'data'" (exit 2) and a non-pointer access
    code, report, err = check("param_array_members.cu")
    assert code == 1, err
    assert {k["kernel"]: k["status"] for k in report["kernels"]} == {
        "gather": "clean", "last_dim": "findings", "rows": "clean", "short_rows": "findings", "own_copy": "unknown"}
    assert races(report) == {("last_dim", "write-after-write", 31, 31), ("short_rows", "write-after-write", 45, 45)}
    # an element at a constant index is one parameter, the same in the guard and the index (`rows`
    # clean), named in the condition
    (cond,) = [f["condition"] for f in report["findings"] if f["kernel"] == "short_rows"]
    assert "d.n.0" in cond and "d.n.1" in cond


def test_a_trait_of_an_unbound_type_parameter_checks_both_branches():
    # `if constexpr (std::is_same_v<M, bool>)` (mlx): before, "'', which is not a declared
    # variable", exit 2; now a 0-or-1 parameter, the race named under its non-bool branch
    code, report, err = check("dependent_trait.cu", "--block-dim", "64", "--grid-dim", "1")
    assert code == 1, err
    assert {k["kernel"]: k["status"] for k in report["kernels"]} == {"masked": "clean", "spread_unless_bool": "findings"}
    (f,) = [f for f in report["findings"] if f["rule"] != "unknown"]
    assert (f["first"]["line"], f["second"]["line"]) == (25, 26)
    assert "std::is_same_v<M,bool> == 0" in f["condition"]


def test_a_pointer_from_a_method_of_a_type_specialised_class():
    # `T *sh = shobj.GetPointer();` on `SharedMemory<T> shobj;` (shoc's stencil): the float
    # specialisation's extern shared array (before: "call of member function ''", exit 2)
    code, report, err = check("specialised_accessor.cu", "--block-dim", "64")
    assert code == 1, err
    assert {k["kernel"]: k["status"] for k in report["kernels"]} == {"staged": "clean", "unstaged": "findings"}
    assert races(report) == {("unstaged", "read-after-write", 44, 45)}


def test_an_object_of_a_dependent_class_built_by_its_constructor_is_unknown_naming_it():
    # (before: "expression '(n, threadIdx.x, smem)'", which named no construct)
    code, report, err = check("dependent_constructed.cu")
    assert code == 0, err
    assert {k["kernel"]: k["status"] for k in report["kernels"]} == {"reduce_rows": "unknown", "plain": "clean"}
    (why,) = [f["message"] for f in report["findings"] if f["rule"] == "unknown"]
    assert "an object of the dependent type 'Reducer' built by its constructor" in why


def test_a_struct_of_vector_members_is_copied_by_value_and_its_lanes_read_and_set():
    """The samples' ray marcher: `Ray r = rays[i]` of two float3 members passed by value, `r.o + r.d * t`
    (a free operator whose first operand is a member), `r.o.x = t`; was `unknown` ("copy of struct
    'Ray', which has an array or vector member 'o'")."""
    kernels, _ = lowered("struct_vector_members.cu")
    assert [k.name for k in kernels if k.unsupported] == []
    code, report, err = check("struct_vector_members.cu", "--frontend", "clang")
    assert code == 1, err
    assert races(report) == {("march_one_slot", "write-after-write", 27, 27),
                             ("shift_rays", "write-after-read", 42, 44)}
    store = [k for k in kernels if k.name == "store_rays"][0]
    writes = [a for a in ir.accesses(store.body) if a.is_write]
    assert [(a.width, a.elem_size) for a in writes] == [(12, 24), (12, 24)]   # each member in one access


def test_a_local_union_lives_in_private_memory_its_members_at_their_offsets():
    """rodinia's mummergpu writes a node's `uint4 data` and reads `start.x`, a byte of it through an
    anonymous struct in the union (was `unknown`: "member '.x'"): the union is private memory, each
    member at its offset (an anonymous member's from clang's layout)."""
    kernels, _ = lowered("local_union.cu")
    assert [k.name for k in kernels if k.unsupported] == []
    assert all(any(b.space == ir.PRIVATE for b in k.buffers.values()) for k in kernels)
    code, report, err = check("local_union.cu", "--frontend", "clang")
    assert code == 1, err
    assert races(report) == {("node_starts", "write-after-write", 26, 26),
                             ("float_bits", "write-after-write", 33, 33),
                             ("child_edges", "write-after-write", 58, 58)}
    kids = [k for k in kernels if k.name == "child_edges"][0]
    assert [(a.offset, a.width) for a in ir.accesses(kids.body) if a.buffer not in ("out", "nodes")] == [
        (ir.Const(0), 16), (ir.Const(3), 3)]   # `data` written whole, `c` read at its offset


def test_a_function_given_as_a_template_argument_is_the_function_called():
    """candle's `moe_gemm_gguf_kernel<qk, qi, block_q_t, vdr, vec_dot_q_cuda>` launched per quantized
    type with its `vec_dot_*` function: a call through the parameter was `unknown` ("call of
    'vec_dot_q_cuda' with a pointer argument"); it is the launch's function, inlined."""
    kernels, _ = lowered("function_template_args.cu")
    reasons = {k.name: k.unsupported and k.unsupported[1] for k in kernels}
    assert reasons["apply<1, read_own>"] is None and reasons["apply<2, write_first>"] is None
    assert reasons["apply<3, packed_dot>"] is None   # `__dp4a`, `__vsubss4`, `__byte_perm` declared
    # a pointer argument to a struct holding an array is the pointer, not the struct copied
    assert reasons["apply_blocks<Block, block_first>"] is None
    assert "pointer argument" in reasons["apply_unlaunched"]
    code, report, err = check("function_template_args.cu", "--frontend", "clang")
    assert code == 1, err
    assert races(report) == {("apply<2, write_first>", "write-after-write", 9, 9)}
