"""The address algebra that keeps solver queries linear must decompose flattened indices exactly."""

from analyzer import ir
from analyzer.analysis.pairing.addresses import radix_split, split_rows

n, h, p, d, H = (ir.Builtin("bid.x"), ir.Builtin("tid.y"), ir.Builtin("tid.z"), ir.Builtin("tid.x"),
                 ir.Param("H"))


def add(*xs):
    out = xs[0]
    for x in xs[1:]:
        out = ir.BinOp("+", out, x)
    return out


def mul(a, k):
    return ir.BinOp("*", a, k if not isinstance(k, int) else ir.Const(k))


def test_parameter_stride_includes_the_rows_constant_factor():
    # B[n, h, p, d] of shape (N, H, 16, 128): ((n*H + h)*16 + p)*128 + d, flattened as TVM does.
    index = add(mul(add(mul(n, H), h), 2048), mul(p, 128), d)
    stride, (row, col), _ = radix_split(index, index, frozenset({"H"}))
    # The row of stride H is n*2048: the columns h*2048 + p*128 + d stay below H*2048, not H.
    assert stride == ir.BinOp("*", H, ir.Const(2048))
    assert row == mul(n, 2048)


def test_only_a_declared_extent_splits_rows():
    # a[r*D + c] through a raw pointer: nothing keeps c below D (with D = 1, r = 0, c = 1 and
    # r = 1, c = 0 meet), so D is no row stride unless the buffer's shape declares it.
    r, c, D = ir.Builtin("tid.y"), ir.Builtin("tid.x"), ir.Param("D")
    index = add(mul(r, D), c)
    assert radix_split(index, index, frozenset()) is None
    assert radix_split(index, index, frozenset({"H"})) is None
    assert radix_split(index, index, frozenset({"D"})) is not None


def test_constant_strides_split_rows_and_columns_exactly():
    index = add(mul(n, 32768), mul(p, 2048), mul(h, 128), d, ir.Param("elem_offset"), ir.Const(16384))
    row, col = split_rows(index, 32768, "elem_offset")
    assert row == n
    # 16384 stays in the column: index == row*32768 + col + elem_offset
    assert col == add(mul(p, 2048), mul(h, 128), d, ir.Const(16384))
