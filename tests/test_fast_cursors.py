"""The clang front end's fast cursor calls (analyzer/frontend/clang/fast_cursors.py): the bindings'
answers unchanged (null cursors, kinds, children), and the C calls they spare counted while a
file of many template instantiations is lowered (issue 41 item 7: mlx's `scan.metal` lowers 456)."""

import clang.cindex as ci

from analyzer.frontend.clang import _read, fast_cursors

INSTANCES = 24
# A kernel template instantiated for the host by name, INSTANCES times: each instantiation is a
# body of its own in clang's AST, walked by the lowering.
SOURCE = """#include <metal_stdlib>
using namespace metal;
template <typename T, uint N>
kernel void shift(device T *out [[buffer(0)]], device const T *in [[buffer(1)]],
                  uint tid [[thread_position_in_threadgroup]], uint gid [[thread_position_in_grid]]) {
    threadgroup T tile[64];
    tile[tid] = in[gid];
    threadgroup_barrier(mem_flags::mem_threadgroup);
    T acc = tile[tid];
    for (uint i = 1; i < N; ++i) {
        acc += tile[(tid + i) % 64];
    }
    out[gid] = acc;
}
""" + "".join(
    f'template [[host_name("shift_{t}_{n}")]] kernel void shift<{t}, {n}>(device {t} *, device const {t} *, uint, uint);\n'
    for t in ("float", "int", "uint", "half", "short", "ushort") for n in (2, 4, 8, 16))


def _unit(text: str = "int f(int x) { return x + 1; }\n"):
    return ci.Index.create().parse("t.c", unsaved_files=[("t.c", text)])


def test_answers_are_the_bindings_answers():
    fast_cursors.install()
    null = ci.conf.null_cursor
    assert null.is_null()
    try:
        null.kind
    except Exception as exc:   # the bindings' own guard, kept
        assert "null-cursor" in str(exc)
    else:
        raise AssertionError("a null cursor's kind was read")
    root = _unit().cursor
    assert not root.is_null()
    assert root.kind == ci.CursorKind.TRANSLATION_UNIT
    fn = [c for c in root.get_children() if c.spelling == "f"][0]
    kinds = [c.kind for c in fn.walk_preorder()]
    assert ci.CursorKind.RETURN_STMT in kinds and ci.CursorKind.BINARY_OPERATOR in kinds
    # Kept children: asked twice, the same cursors; the list a caller gets is its own iterator.
    first, again = list(fn.get_children()), list(fn.get_children())
    assert [c.kind for c in first] == [c.kind for c in again] and all(a == b for a, b in zip(first, again))
    assert ci.CursorKind.from_id(ci.CursorKind.RETURN_STMT.value) is ci.CursorKind.RETURN_STMT
    assert ci.TypeKind.from_id(ci.TypeKind.INT.value) is ci.TypeKind.INT
    assert fn.type.kind == ci.TypeKind.FUNCTIONPROTO and fn.result_type.kind == ci.TypeKind.INT
    try:
        ci.CursorKind.from_id(10 ** 6)
    except ValueError:
        pass
    else:
        raise AssertionError("an unknown kind id was read")


def test_lowering_many_instantiations_spares_the_null_checks(monkeypatch):
    """Every cursor property used to ask clang_equalCursors whether the cursor is null: hundreds
    of thousands of C calls for this file. Now only comparisons the lowering makes itself do."""
    fast_cursors.install()
    lib = ci.conf.lib
    real = lib.clang_equalCursors
    calls = []

    def counted(a, b):
        calls.append(1)
        return real(a, b)

    monkeypatch.setattr(lib, "clang_equalCursors", counted)
    reading = _read(SOURCE, "metal", "many.metal")
    assert reading.error is None
    assert sorted(k.name for k in reading.kernels) == sorted(
        f"shift<{t}, {n}>" for t in ("float", "int", "uint", "half", "short", "ushort") for n in (2, 4, 8, 16))
    assert all(k.unsupported is None for k in reading.kernels)
    # With the bindings' guard it was one call per property read: 29,379 for this file (none now).
    assert len(calls) < 20 * len(reading.kernels), len(calls)
