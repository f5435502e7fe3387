"""Metal and OpenCL constructs the real-code benchmark met (issue 41), on fixtures of our own in
tests/clang/: Metal's matrices (in a template too), and pointers moved in loops and branches."""

import pytest

from analyzer import ir
from test_clang_frontend import check, findings, lowered


def _stores(kernel) -> list[ir.Access]:
    out = []

    def walk(stmts):
        for s in stmts:
            if isinstance(s, ir.MemOp) and s.access.is_write:
                out.append(s.access)
            for attr in ("then", "orelse", "body"):
                walk(getattr(s, attr, None) or [])
    walk(kernel.body)
    return out


def _names(e) -> list[str]:
    if isinstance(e, ir.Var):
        return [e.name]
    return [n for x in getattr(e, "args", ()) or (getattr(e, "a", None), getattr(e, "b", None)) if x is not None
            for n in _names(x)]


def test_metal_matrices_are_their_columns_and_products_their_sums_of_products():
    kernels, _ = lowered("metal_matrices.metal")
    assert [(k.name, k.unsupported is None) for k in kernels] == [
        ("same", True), ("differs", True), ("columns", True), ("resized", False), ("templated", True)]
    assert "a 3x2 matrix built from a 3x3 one" in kernels[3].unsupported[1]
    # m * v: lane r is the sum over columns j of m[j][r] * v[j] (a 4x4 matrix: lane 4j + r)
    (product,) = [a for a in _stores(kernels[1]) if a.buffer == "out"]
    lanes = product.value.args
    assert len(lanes) == 4
    assert _names(lanes[1]) == ["m.1", "v.0", "m.5", "v.1", "m.9", "v.2", "m.13", "v.3"]
    # a float3x3's columns are 16 bytes apart, a matrix 48: p[gid][2] and p[gid][1][2]
    col, entry, _ = _stores(kernels[2])
    assert (col.width, entry.width) == (16, 4)
    code, report, err = check("metal_matrices.metal", "--block-dim", "64")
    assert code == 1, err
    # `same` stores one value from every thread (the diagonal's product and columns moved by index);
    # in the template, `OType(m * r)` is a value of the vector's lanes (it was one value for every
    # thread, its vector operand dropped: the race went unseen)
    assert findings(report) == {("write-after-write", 34), ("write-after-write", 58)}
    assert {f["kernel"] for f in report["findings"] if f["rule"] != "unknown"} == {"differs", "templated"}


def test_a_pointer_moved_in_a_loop_or_a_branch_is_where_the_program_left_it():
    # (before: every iteration read the offset the pointer had on entry, and after an `if` the
    # pointer was where the then-branch left it, taken or not: both races went unseen)
    code, report, err = check("pointer_moves.cl", "--block-dim", "64")
    assert code == 1, err
    assert findings(report) == {("write-after-write", 8), ("write-after-write", 27)}
    assert {f["kernel"] for f in report["findings"]} == {"runs_overlap", "moved_on_odd"}


@pytest.mark.parametrize("frontend", ["clang", "lark"])
def test_pointer_moves_in_updates_do_continue_break_switch_and_goto(frontend):
    # Both front ends: a `for` update's move after the body, `do`, `continue`, `break`, `switch`
    # (before: Lark's update moved the pointer for the body and its switch's and nested block's moves
    # were lost or leaked, clang's switch leaked its case's move and refused `continue`: races missed)
    code, report, err = check("pointer_moves_more.cl", "--block-dim", "64", "--frontend", frontend)
    assert code == 1, err
    assert findings(report) == {("write-after-write", line) for line in (14, 21, 33, 44, 45, 57)}
    by_kernel = {}
    for f in report["findings"]:
        by_kernel.setdefault(f["kernel"], []).append(f)
    assert "block_move" not in by_kernel
    assert {k for k, fs in by_kernel.items() if any(f["rule"] == "unknown" for f in fs)} == {
        "goto_skips_move", "another_buffer"}
    assert "after a goto" in by_kernel["goto_skips_move"][0]["message"]
    assert "another buffer" in by_kernel["another_buffer"][0]["message"]
    # a step before the `continue` is an induction: the witnesses replay
    cont = [f for f in report["findings"] if f["kernel"] == "continue_runs"]
    assert cont and all(f["severity"] == "error" and f["witness"]["replayed"] for f in cont)
    # line 44 stores at 2 * (gid + 1), distinct per work-item: the analysis does not follow which
    # iteration a `break` leaves, so its witness there does not replay, and it is only a warning
    at_44 = [f for f in report["findings"] if f["second"]["line"] == 44 and f["first"]["line"] == 44]
    assert at_44 and all(f["severity"] == "warning" and not f["witness"]["replayed"] for f in at_44)


def test_a_local_structs_pointer_members_are_its_constructors_and_move_with_it():
    # (before: a `threadgroup T* dst;` member was made static (clang: the constructor's `dst(dst_)`
    # names no member) and a local struct built by a constructor of the user's was not read: exit 2)
    code, report, err = check("metal_loader_members.metal", "--block-dim", "64")
    assert code == 1, err
    # `unsynced` reads the neighbour's staged element with no barrier after the load; in `sliding`
    # next_dst() moves the threadgroup pointer one element an iteration (a race between iterations)
    assert findings(report) == {("read-after-write", 48), ("write-after-write", 16)}
    assert {f["kernel"] for f in report["findings"]} == {"unsynced", "sliding"}
    kernels, _ = lowered("metal_loader_members.metal")
    assert all(k.unsupported is None for k in kernels)
    # `staged`: the device pointer the loader's next() advances is carried by the loop (the load of
    # iteration k reads in + gid * 64 + lid + k * n); the threadgroup one is never moved
    loop = next(s for s in kernels[0].body if isinstance(s, ir.Loop))
    assert [a.target for a in ir.walk_stmts(loop.body + loop.update)
            if isinstance(a, ir.Assign) and a.target.endswith(".moved")] == ["in.moved"]


def test_pointer_members_of_a_struct_held_in_private_memory():
    # (before: a struct with an array member lives in a private buffer, and its pointer members'
    # initialisers were `unknown`: every kernel of mlx's steel conv loaders)
    code, report, err = check("metal_held_loader_members.metal", "--block-dim", "64")
    assert code == 1, err
    assert findings(report) == {("read-after-write", 39), ("write-after-write", 19), ("write-after-write", 63)}
    assert {f["kernel"] for f in report["findings"]} == {"held_unsynced", "held_sliding", "held_outside"}
    kernels, _ = lowered("metal_held_loader_members.metal")
    assert all(k.unsupported is None for k in kernels)
    # the loader is held in memory (its `rows` are stores to a private buffer), next_dst() in the
    # loop moves the threadgroup pointer through a variable the loop carries
    sliding = kernels[2]
    assert any(b.space == ir.PRIVATE for b in sliding.buffers.values())
    loop = next(s for s in sliding.body if isinstance(s, ir.Loop))
    assert [a.target for a in ir.walk_stmts(loop.body + loop.update)
            if isinstance(a, ir.Assign) and a.target.endswith(".moved")] == ["tile.moved"]


def test_arrays_of_pointers_hold_their_elements_offsets():
    # (before: an array of pointers was an array of its pointees' type, `rows[0][0]` "memory access
    # through a non-pointer": mlx's conv input loaders' `const device T* src[n_rows]`)
    code, report, err = check("metal_pointer_arrays.metal", "--block-dim", "64")
    assert code == 1, err
    by_kernel = {(f["kernel"], f["rule"]) for f in report["findings"] if f["severity"] != "note"}
    # moved_row's `rows[1] += 1` makes thread t's row 1 thread t + 1's row 0; pointers into two
    # buffers are not followed; the loader's rows, set and moved in loops, read the input only
    assert by_kernel == {("moved_row", "write-after-write"), ("two_buffers", "unknown")}
    assert findings(report) >= {("write-after-write", 26)}
    kernels, _ = lowered("metal_pointer_arrays.metal")
    loader = next(k for k in kernels if k.name == "loader_rows")
    assert loader.unsupported is None
    assert any(n.endswith(".ptr") and b.space == ir.PRIVATE for n, b in loader.buffers.items())


def test_a_shared_array_of_pointers_is_not_taken_for_a_threads_own():
    # (a guard of pointer_arrays.py: read as one a thread, this kernel would be clean)
    code, _, err = check("shared_pointer_array.cu", "--block-dim", "64")
    assert code == 2 and "an array of pointers that is not a thread's own" in err, err


def test_simdgroup_thread_elements_are_the_lanes_own_values():
    # (before: `thread_elements()` was no member of our simdgroup_matrix (clang's error), a matrix
    # built from a scalar, `Aligned<true>{}` passed by value and `(void)tag` were not read: exit 2)
    code, report, err = check("metal_thread_elements.metal", "--block-dim", "64")
    assert code == 1, err
    # the lanes' elements are values of their own registers: the threads' stores to out[gid] differ
    assert findings(report) == {("write-after-write", 28)}


def test_a_pointer_moved_through_a_reference_parameter_is_unknown():
    # (before: the callee's move rebound its own parameter, the caller's pointer stayed where it was,
    # and `moved_by_callee` was clean: a race missed)
    code, report, err = check("pointer_by_reference.cu", "--block-dim", "64")
    assert code == 0, err
    (f,) = report["findings"]
    assert (f["rule"], f["kernel"]) == ("unknown", "moved_by_callee")
    assert "passed by reference" in f["message"]
