"""Cooperative groups in the clang lowering: the block, the grid and tiles of a constant size
(`this_thread_block`, `tiled_partition<32>`), their ranks and sizes, a tile's shuffles and votes,
`cg::reduce` and the scans of a tile, and their `sync` as a barrier of the group's scope."""

from __future__ import annotations

from analyzer import ir
from analyzer.frontend.c_tree import Unsupported
from analyzer.frontend.c_values import Group, Scalar, Value
from analyzer.frontend.clang.cursors import canonical
from analyzer.frontend.dialects import CudaLowering, _keep_reads


class ClangGroups:
    """Cooperative groups; mixed into ClangLowering."""

    def group_type(self, t) -> bool:
        return self.lang == "cuda" and "cooperative_groups::" in canonical(t).spelling

    def _group(self, fn, args, c) -> Group | None:
        if self.lang != "cuda" or not self.from_headers(c):
            return None
        if fn == "this_thread_block" and not args:
            return Group("block")
        if fn == "this_grid" and not args:
            return Group("grid")
        if fn == "tiled_partition" and args:
            size = None
            t = canonical(c.type)
            if t.get_num_template_arguments() == 1:
                size = t.get_template_argument_value(0) if hasattr(t, "get_template_argument_value") else None
            if size is None:
                import re
                m = re.search(r"thread_block_tile<(\d+)", t.spelling)
                size = int(m.group(1)) if m else None
            if size is None and len(args) == 2:
                from analyzer.frontend.c_values import const_int
                size = const_int(self.cond(args[1]))
            if size is None:
                raise Unsupported(c, "tiled_partition of a size that is not a constant")
            return Group("tile", size)
        return None

    def _group_call(self, group: Group, fn, args, c) -> Value:
        if fn in ("thread_rank",):
            if group.kind == "tile":
                return Scalar(ir.BinOp("%", ir.Builtin("linear_tid"), ir.Const(group.size)), "uint")
            if group.kind == "block":
                return Scalar(ir.Builtin("linear_tid"), "uint")
        if fn in ("size", "num_threads") and group.kind == "tile":
            return Scalar(ir.Const(group.size), "uint")
        threads = ir.BinOp("*", ir.BinOp("*", ir.Builtin("bdim.x"), ir.Builtin("bdim.y")), ir.Builtin("bdim.z"))
        if fn in ("size", "num_threads") and group.kind == "block":
            return Scalar(threads, "uint")
        if group.kind == "grid" and fn in ("thread_rank", "size", "num_threads", "block_rank", "num_blocks"):
            blocks = ir.BinOp("*", ir.BinOp("*", ir.Builtin("gdim.x"), ir.Builtin("gdim.y")), ir.Builtin("gdim.z"))
            block = ir.BinOp("+", ir.Builtin("bid.x"), ir.BinOp("*", ir.Builtin("gdim.x"), ir.BinOp(
                "+", ir.Builtin("bid.y"), ir.BinOp("*", ir.Builtin("gdim.y"), ir.Builtin("bid.z")))))
            value = {"thread_rank": ir.BinOp("+", ir.BinOp("*", block, threads), ir.Builtin("linear_tid")),
                     "size": ir.BinOp("*", blocks, threads), "num_threads": ir.BinOp("*", blocks, threads),
                     "block_rank": block, "num_blocks": blocks}[fn]
            return Scalar(value, "ulong")
        if group.kind == "block" and fn in ("thread_index", "group_index", "group_dim", "dim_threads"):
            return self._builtin_vec({"thread_index": "tid", "group_index": "bid"}.get(fn, "bdim"))
        if group.kind == "grid" and fn in ("block_index", "dim_blocks"):   # (the grid in blocks)
            return self._builtin_vec("bid" if fn == "block_index" else "gdim")
        tile = group.kind == "tile" and group.size is not None and 0 < group.size <= 32 and \
            group.size & (group.size - 1) == 0
        if fn == "meta_group_rank" and tile:
            return Scalar(ir.BinOp("/", ir.Builtin("linear_tid"), ir.Const(group.size)), "uint")
        if fn == "meta_group_size" and tile:   # the tiles of the block, the last one maybe partial
            return Scalar(ir.BinOp("/", ir.BinOp("+", threads, ir.Const(group.size - 1)), ir.Const(group.size)), "uint")
        if fn.startswith("shfl") and tile:
            # a tile of a power of two up to 32 threads is a segment of its warp: CUDA's width
            vals = [self.rvalue(a) for a in args]
            _keep_reads(self, vals, c)   # the result names none of the reads in the arguments
            from analyzer.frontend.dialects import _shuffle_source
            src = _shuffle_source(f"__{fn}_sync", [None] + [self._scalar(v) if isinstance(v, Scalar) else None
                                                           for v in vals][:2] + [ir.Const(group.size)])
            return Scalar(ir.Opaque(f"result of {fn}", next(self.opaque_ids), src), "float")
        if fn in ("any", "all", "ballot") and tile:
            _keep_reads(self, [self.rvalue(a) for a in args], c)   # reads in the argument still happen
            return Scalar(ir.Opaque(f"result of {fn}", next(self.opaque_ids)), "uint")
        raise Unsupported(c, f"'{fn}' of a cooperative group")

    def _group_collective(self, fn, args, c) -> Value:
        """`cg::reduce(tile, v, cg::plus<float>{})` and the scans: the tile's threads exchange values
        (another thread's value: opaque); reads in the value still happen; no barrier."""
        group = self.rvalue(args[0])
        if not isinstance(group, Group) or group.kind != "tile" or group.size is None or not (
                0 < group.size <= 32 and group.size & (group.size - 1) == 0):
            raise Unsupported(c, f"cooperative_groups::{fn} of a group that is no tile of up to 32 threads")
        val = self.rvalue(args[1])
        _keep_reads(self, [val], c)   # the result names none of the reads in the value
        ty = getattr(val, "ty", "float")
        # a reduce gives every thread of the tile one value: as if read from the tile's first thread
        first = ir.BinOp("*", ir.BinOp("/", ir.Builtin("linear_tid"), ir.Const(group.size)), ir.Const(group.size))
        return Scalar(ir.Opaque(f"result of cooperative_groups::{fn}", next(self.opaque_ids),
                                first if fn == "reduce" else None), ty)

    def group_barrier(self, group: Group, c) -> ir.Barrier:
        return CudaLowering._group_barrier(self, group, c)
