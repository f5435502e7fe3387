"""The CUDA and Metal vocabularies: kernels, builtins, barriers, address spaces, atomics, shuffles
(OpenCL C's is in opencl.py); `lowering_for` picks a C-family dialect's lowering."""

from __future__ import annotations

import re

from lark import Tree

from analyzer import ir
from analyzer.frontend import atomics
from analyzer.frontend.c_tree import kind
from analyzer.frontend.c_values import Group, LocalRef
from analyzer.frontend.lower import (BuiltinVec, CLowering, Pointer, Scalar, Unsupported, Value, Vector, position,
                                     tokens_of)
from analyzer.frontend.opencl import OpenClLowering
from analyzer.frontend.parser import CG_TYPES
from analyzer.frontend.types import vector_shape

_BOTH = frozenset({ir.SHARED, ir.GLOBAL})
# Metal's mem_flags and the memory each orders (texture, imageblock and object data memory hold no
# access the IR models). `mem_device_and_threadgroup` is the Metal 1.x spelling of both.
_MEM_FLAGS = {"mem_none": frozenset(), "mem_device": frozenset({ir.GLOBAL}),
              "mem_threadgroup": frozenset({ir.SHARED}), "mem_device_and_threadgroup": _BOTH,
              "mem_texture": frozenset(), "mem_threadgroup_imageblock": frozenset(),
              "mem_object_data": frozenset()}


class CudaLowering(CLowering):
    lang = "cuda"
    group_types = CG_TYPES
    kernel_qualifiers = frozenset({"__global__"})
    shared_qualifiers = frozenset({"__shared__"})
    space_of_qualifier = {"__shared__": ir.SHARED, "__constant__": ir.CONSTANT}
    device_variable_qualifiers = {"__device__": ir.GLOBAL, "__managed__": ir.GLOBAL, "__constant__": ir.CONSTANT}
    barrier_names = ("__syncthreads", "__syncwarp", "__syncthreads_count", "__syncthreads_and",
                     "__syncthreads_or")
    _builtins = {"threadIdx": "tid", "blockIdx": "bid", "blockDim": "bdim", "gridDim": "gdim"}

    def builtin_name(self, name: str) -> Value | None:
        if name in self._builtins:
            return BuiltinVec(self._builtins[name])
        if name == "warpSize":
            return Scalar(ir.Const(32))
        return None

    def barrier(self, fn, node):
        if fn == "__syncthreads":
            return ir.Barrier(ir.BLOCK, _BOTH, self.span(node), "__syncthreads()")
        if fn == "__syncwarp":
            return ir.Barrier(ir.WARP, _BOTH, self.span(node), "__syncwarp()")
        if fn in ("__threadfence", "__threadfence_block"):
            return None
        return None

    def call_stmt(self, node):
        fn = self._callee_name(node)
        if fn == "__threadfence_block":
            return []  # a fence orders one thread's accesses; it synchronises no one
        if fn in ir.FENCES:
            # The same, at device scope: kept as a marker, for the last-block pattern (last_block.py).
            return [ir.Eval(ir.Call(fn, ()), self.span(node))]
        callee = node.children[0]
        args = list(node.children[1].children) if node.children[1] is not None else []
        if kind(callee) == "member" and str(callee.children[1]) == "sync" and not args:   # g.sync()
            group = self.rvalue(callee.children[0])
            if isinstance(group, Group):
                return [self._group_barrier(group, node)]
        if fn == "sync" and len(args) == 1:   # cg::sync(g)
            group = self.rvalue(args[0])
            if isinstance(group, Group):
                return [self._group_barrier(group, node)]
        return super().call_stmt(node)

    def _group_barrier(self, group: Group, node) -> ir.Barrier:
        """A cooperative group's sync: the block's is __syncthreads(), a 32-thread tile's is its warp's
        __syncwarp(), the grid's a barrier of every thread of the grid (it orders device memory
        between blocks: the cooperative launch's grid.sync() fences it). A smaller tile's orders
        part of a warp: not modelled, so the kernel is unknown rather than analysed with a barrier
        it does not have."""
        if group.kind == "block":
            return ir.Barrier(ir.BLOCK, _BOTH, self.span(node), "this_thread_block().sync()")
        if group.kind == "grid":
            return ir.Barrier(ir.GRID, _BOTH, self.span(node), "this_grid().sync()")
        if group.kind == "tile" and group.size == self.warp_size:
            return ir.Barrier(ir.WARP, _BOTH, self.span(node), f"tiled_partition<{group.size}>().sync()")
        raise Unsupported(node, f"sync of a tiled_partition<{group.size}> (a barrier of part of a warp)")

    def _group(self, fn, args, node) -> Group | None:
        """cg::this_thread_block(), cg::this_grid(), cg::tiled_partition<N>(g) / (g, N)."""
        if fn == "this_thread_block" and not args:
            return Group("block")
        if fn == "this_grid" and not args:
            return Group("grid")
        if fn == "tiled_partition" and args:
            callee = node.children[0]
            size = None
            if kind(callee) == "template_ref" and len(callee.children[1].children) == 1:
                size = self._scalar(self.rvalue(callee.children[1].children[0]))
            elif len(args) == 2:
                size = self._scalar(self.rvalue(args[1]))
            if not isinstance(size, ir.Const):
                raise Unsupported(node, "tiled_partition of a size that is not a constant")
            return Group("tile", size.value)
        return None

    def call_value(self, fn, args, node):
        group = self._group(fn, args, node)
        if group is not None:
            return group
        if fn in _CURAND and args:
            return self._curand(fn, args, node)
        if fn.startswith("atomic") and args:
            target = args[0]
            ptr = self.rvalue(target)
            if not isinstance(ptr, Pointer):
                raise Unsupported(node, f"'{fn}' on a non-pointer")
            vals = [self.rvalue(a) for a in args[1:]]
            acc = self.make_access(ptr, True, self.span(node), atomic=True)
            acc.value = ir.Call(fn, tuple(self._scalar(v) for v in vals))
            self.pending.append(ir.MemOp(acc))
            step = self._scalar(vals[0]) if len(vals) == 1 and isinstance(vals[0], Scalar) else None
            base = fn.split("_")[0]
            # or/xor with 0 leave the element as an add of 0 does (the idiom's atomic load)
            adds = base in ("atomicAdd", "atomicSub") or (base in ("atomicOr", "atomicXor") and step == ir.Const(0))
            scope = ir.BLOCK if fn.endswith("_block") else None
            return Scalar(atomics.fetch_result(fn, next(self.opaque_ids), acc, step if adds else None,
                                               subtract=fn.startswith("atomicSub"), scope=scope,
                                               unsigned=base == "atomicAdd" and atomics.unsigned_c(ptr.elem)), "int")
        if fn.startswith("__shfl") or fn in ("__activemask", "__ballot_sync", "__any_sync", "__all_sync"):
            vals = [self.rvalue(a) for a in args]   # reads in the arguments still happen
            _keep_reads(self, vals, node)
            source = _shuffle_source(fn, [self._scalar(v) if isinstance(v, Scalar) else None for v in vals])
            return Scalar(ir.Opaque(f"result of {fn}", next(self.opaque_ids), source), "float")
        if fn in ("__syncthreads_count", "__syncthreads_and", "__syncthreads_or"):
            return self._sync_reduce(fn, args, node)
        return None

    def _sync_reduce(self, fn, args, node) -> Value:
        """`__syncthreads_count/_and/_or(p)`: p is evaluated (its reads happen) before the block's
        barrier, and every thread of the block receives the same result, which the analysis does
        not know: a value of the block (its linear index is the source: blocks receive their own)
        and of the iteration."""
        if len(args) != 1:
            raise Unsupported(node, f"'{fn}' with {len(args)} arguments")
        span = self.span(node)
        self.pending.append(ir.Eval(self._scalar(self.rvalue(args[0])), span))
        self.pending.append(ir.Barrier(ir.BLOCK, _BOTH, span, f"{fn}()"))
        block = ir.BinOp("+", ir.Builtin("bid.x"), ir.BinOp("*", ir.Builtin("gdim.x"), ir.BinOp(
            "+", ir.Builtin("bid.y"), ir.BinOp("*", ir.Builtin("gdim.y"), ir.Builtin("bid.z")))))
        return Scalar(ir.Opaque(f"result of {fn}", next(self.opaque_ids), block), "int")


    def _curand(self, fn, args, node) -> Value:
        """A curand generator call: the state (its last argument, `&local` or `&states[i]`) is read
        unless initialised, and replaced by a value the analysis does not know; the number drawn
        is one too. A state is per-thread data like any other: copies to and from an array of states
        are accesses to that array."""
        *rest, state = args
        for a in rest:   # the seed, subsequence and offset, and whatever they read
            self.rvalue(a)
        if isinstance(state, Tree) and kind(state) == "addr_of" and kind(state.children[-1]) == "name":
            local = self.lookup(str(state.children[-1].children[0]), state)
            if not isinstance(local, (LocalRef, Scalar)) or isinstance(local, Scalar) and not isinstance(local.expr, ir.Var):
                raise Unsupported(node, f"'{fn}' on a state that is no local variable or element in memory")
            name = local.name if isinstance(local, LocalRef) else local.expr.name
            self.pending.append(ir.Assign(name, self.opaque(f"{fn} state"), self.span(node)))
        else:
            ptr = self.rvalue(state)
            if not isinstance(ptr, Pointer):
                raise Unsupported(node, f"'{fn}' on a state that is no local variable or element in memory")
            if fn != "curand_init":
                self.pending.append(self._access_stmt(ptr, False, None, self.span(node)))
            self.pending.append(self._access_stmt(ptr, True, Scalar(self.opaque(f"{fn} state"), "int"),
                                                  self.span(node)))
        return Scalar(self.opaque(f"result of {fn}"), "float" if "uniform" in fn or "normal" in fn else "uint")


# cuRAND's device API (curand_kernel.h): generators that draw from, and step, a state.
_CURAND = frozenset("""curand_init curand curand_uniform curand_uniform_double curand_uniform2_double
    curand_uniform4 curand_uniform4_double curand_normal curand_normal_double curand_normal2
    curand_normal2_double curand_normal4 curand_normal4_double curand_log_normal curand_log_normal_double
    curand_log_normal2 curand_log_normal4 curand_poisson curand_poisson4 curand_discrete curand_discrete4
    skipahead skipahead_sequence""".split())


class MetalLowering(CLowering):
    lang = "metal"
    kernel_qualifiers = frozenset({"kernel"})
    shared_qualifiers = frozenset({"threadgroup"})
    space_of_qualifier = {"device": ir.GLOBAL, "threadgroup": ir.SHARED, "constant": ir.CONSTANT,
                          "thread": ir.PRIVATE}
    device_variable_qualifiers = {"device": ir.GLOBAL, "constant": ir.CONSTANT}
    constant_space_is_immutable = True
    barrier_names = ("threadgroup_barrier", "simdgroup_barrier")
    # Attribute-bound builtins: attribute -> (vector prefix or scalar builtin)
    _attrs = {
        "thread_position_in_threadgroup": "tid",
        "threadgroup_position_in_grid": "bid",
        "threads_per_threadgroup": "bdim",
        "threadgroups_per_grid": "gdim",
    }

    def expr_as_type(self, node):
        """as_type<T>(x) reinterprets x's bits: lane by lane when both have as many lanes (uint4 to
        float4), otherwise one opaque function of all of x's lanes."""
        ty = self._type_of(node.children[0]).base
        val = self.rvalue(node.children[1])
        comps = val.comps if isinstance(val, Vector) else (self._scalar(val),)
        shape = vector_shape(ty)
        lanes = shape[1] if shape else 1
        elem = shape[0] if shape else ty
        if lanes == len(comps):
            out = tuple(ir.Call(f"as_type<{elem}>", (c,)) for c in comps)
        else:
            whole = ir.Call(f"as_type<{ty}>", (ir.Call("vec", tuple(comps)),))
            out = tuple(ir.Call(f"lane{i}", (whole,)) for i in range(lanes))
        return Vector(out, ty) if shape else Scalar(out[0], ty)

    def _builtin_param(self, name, ty, attrs):
        for a in attrs:
            attr = str(a.children[0])
            if attr in self._attrs:
                prefix = self._attrs[attr]
                if ty.base.endswith(("2", "3")):
                    return BuiltinVec(prefix)
                return Scalar(ir.Builtin(f"{prefix}.x"), "uint")
            if attr in METAL_SCALAR_ATTRS:
                return Scalar(METAL_SCALAR_ATTRS[attr], "uint")
            if attr == "thread_position_in_grid":
                if ty.base.endswith(("2", "3")):
                    raise Unsupported(a, "vector [[thread_position_in_grid]]")
                return Scalar(ir.BinOp("+", ir.BinOp("*", ir.Builtin("bid.x"), ir.Builtin("bdim.x")),
                                       ir.Builtin("tid.x")), "uint")
            if attr == "buffer":
                continue
            raise Unsupported(a, f"attribute [[{attr}]]")
        if ty.ref and not ty.ptr and ty.space == ir.CONSTANT and ty.base in ("int", "uint", "float", "half"):
            # `constant int& n [[buffer(k)]]`: a scalar argument
            self.kernel.params.append(name)
            return Scalar(ir.Param(name), ty.base)
        return None

    def _flags(self, node: Tree) -> frozenset[str]:
        """The memory spaces a barrier's mem_flags order: the union of the flags named (`|`)."""
        words = {w for v in tokens_of(node) for w in re.findall(r"[A-Za-z_]\w*", str(v))}
        flags = [w for w in words if w in _MEM_FLAGS]
        if not flags:
            # Flags the lowering cannot read (a variable, an integer): assume they order both
            # rather than warn about memory order on a guess.
            return _BOTH
        return frozenset().union(*(_MEM_FLAGS[f] for f in flags))

    def barrier(self, fn, node):
        if fn in ("threadgroup_barrier", "metal::threadgroup_barrier"):
            return ir.Barrier(ir.BLOCK, self._flags(node), self.span(node), self.call_text(node))
        if fn in ("simdgroup_barrier", "metal::simdgroup_barrier"):
            return ir.Barrier(ir.WARP, self._flags(node), self.span(node), self.call_text(node))
        return None

    def call_value(self, fn, args, node):
        if fn in ("select", "metal::select") and len(args) == 3:
            # select(a, b, c) is c ? b : a
            a, b = self.rvalue(args[0]), self.rvalue(args[1])
            c = self.cond(args[2])
            return Scalar(ir.Select(c, self._scalar(b), self._scalar(a)), getattr(a, "ty", "int"))
        if fn.startswith(("simd_", "quad_")):
            vals = [self.rvalue(a) for a in args]   # reads in the arguments still happen
            _keep_reads(self, vals, node)
            source = _shuffle_source(fn, [self._scalar(v) if isinstance(v, Scalar) else None for v in vals])
            return Scalar(ir.Opaque(f"result of {fn}", next(self.opaque_ids), source), "float")
        if fn.startswith(("atomic_", "metal::atomic_")):
            return self._metal_atomic(fn.removeprefix("metal::"), args, node)
        return None

    def _metal_atomic(self, fn, args, node) -> Value:
        """atomic_load/store/exchange/fetch_OP/compare_exchange_weak _explicit on an atomic_int,
        atomic_uint or atomic_float: one atomic access (atomics do not race with each other; a
        plain access of the same element does). A fetch-add of a positive constant is a ticket."""
        if fn not in _METAL_ATOMICS or not args:
            raise Unsupported(node, f"Metal atomic '{fn}'")
        ptr = self.rvalue(args[0])
        if not isinstance(ptr, Pointer):
            raise Unsupported(node, f"'{fn}' on a non-pointer")
        vals = [self.rvalue(a) for a in args[1:]]   # the memory order is a number; reads still happen
        acc = self.make_access(ptr, fn != "atomic_load_explicit", self.span(node), atomic=True)
        if not acc.is_write:
            atomics.mark(acc, "load")
            return Scalar(ir.Read(acc), "uint")
        acc.value = ir.Call(fn, tuple(self._scalar(v) for v in vals if isinstance(v, Scalar)))
        self.pending.append(ir.MemOp(acc))
        if fn == "atomic_store_explicit":
            atomics.mark(acc, "store")
            return Scalar(ir.Const(0), "uint")
        step = self._scalar(vals[0]) if vals and isinstance(vals[0], Scalar) else None
        adds = fn in ("atomic_fetch_add_explicit", "atomic_fetch_sub_explicit")
        return Scalar(atomics.fetch_result(fn, next(self.opaque_ids), acc, step if adds else None,
                                           subtract=fn == "atomic_fetch_sub_explicit",
                                           unsigned=atomics.unsigned_c(ptr.elem)), "uint")


def metal_position(attr: str, lanes: int) -> tuple[ir.Expr, ...] | None:
    """The lanes of a Metal thread-position attribute on a `uint`/`uint2`/`uint3` parameter (a
    scalar is lane x), or None for an attribute that is no per-dimension position: the grid's
    position and size are the block's times the block extent (plus the thread's), per dimension."""
    dims = "xyz"[:max(1, min(lanes, 3))]
    if attr in MetalLowering._attrs or attr == "dispatch_threads_per_threadgroup":
        prefix = MetalLowering._attrs.get(attr, "bdim")
        return tuple(ir.Builtin(f"{prefix}.{d}") for d in dims)
    if attr == "thread_position_in_grid":
        return tuple(ir.BinOp("+", ir.BinOp("*", ir.Builtin(f"bid.{d}"), ir.Builtin(f"bdim.{d}")),
                              ir.Builtin(f"tid.{d}")) for d in dims)
    if attr in ("threads_per_grid", "grid_size"):
        return tuple(ir.BinOp("*", ir.Builtin(f"gdim.{d}"), ir.Builtin(f"bdim.{d}")) for d in dims)
    return None


# Metal's scalar thread-position attributes, for the Lark and clang front ends alike.
METAL_SCALAR_ATTRS = {"thread_index_in_simdgroup": ir.Builtin("lane"),
                      "simdgroup_index_in_threadgroup": ir.Builtin("warp"),
                      "thread_index_in_threadgroup": ir.Builtin("linear_tid"),
                      "threads_per_simdgroup": ir.Const(32),
                      "thread_execution_width": ir.Const(32),
                      "thread_index_in_quadgroup": ir.BinOp("%", ir.Builtin("linear_tid"), ir.Const(4)),
                      "quadgroup_index_in_threadgroup": ir.BinOp("/", ir.Builtin("linear_tid"), ir.Const(4)),
                      **{f"{pre}{unit}s_per_threadgroup": ir.BinOp("/", ir.BinOp(
                          "+", ir.BinOp("*", ir.BinOp("*", ir.Builtin("bdim.x"), ir.Builtin("bdim.y")),
                                        ir.Builtin("bdim.z")), ir.Const(n - 1)), ir.Const(n))
                         for pre in ("", "dispatch_") for unit, n in (("simdgroup", 32), ("quadgroup", 4))}}


def lowering_for(lang: str):
    return {"cuda": CudaLowering, "metal": MetalLowering, "opencl": OpenClLowering}[lang]


_METAL_ATOMICS = frozenset({f"atomic_{op}_explicit" for op in (
    "load", "store", "exchange", "compare_exchange_weak", "fetch_add", "fetch_sub", "fetch_and", "fetch_or",
    "fetch_xor", "fetch_min", "fetch_max")})

# Shuffles whose source lane is a term: name -> (how the lane is chosen, index of that argument).
_SHUFFLES = {"__shfl_sync": ("idx", 2), "__shfl_up_sync": ("up", 2), "__shfl_down_sync": ("down", 2),
             "__shfl_xor_sync": ("xor", 2), "simd_shuffle": ("idx", 1), "simd_shuffle_up": ("up", 1),
             "simd_shuffle_down": ("down", 1), "simd_shuffle_xor": ("xor", 1)}


def _keep_reads(low, vals: list, node) -> None:
    """The memory reads in a collective's arguments (`simd_sum(partial[lane])`, `__shfl_down_sync(m,
    s[i], 1)`) as statements of their own: the result is opaque and names none of them, so without
    this they left the IR, and a race on what they read went unchecked."""
    for v in vals:
        if isinstance(v, Scalar):
            e = low._scalar(v)
            if ir.reads_memory(e):
                low.pending.append(ir.Assign(low.fresh_var("collective_arg"), e, low.span(node)))


def _shuffle_source(fn: str, args: list):
    """The linear index of the thread whose value a shuffle returns, or None when that is not a
    term here (another intrinsic, a width that is not a constant power of two <= 32). Lanes
    count within segments of `width` (CUDA's last argument; Metal's SIMD-group of 32); a lane
    moved past its segment's end (down, xor) or start (up) reads its own value, and a chosen lane
    counts modulo the width (CUDA's rule; Apple GPUs' behaviour for Metal, stated in docs/how-it-works.md)."""
    if fn not in _SHUFFLES:
        return None
    kind, at = _SHUFFLES[fn]
    if len(args) <= at or args[at] is None:
        return None
    width = args[3] if fn.startswith("__") and len(args) > 3 else ir.Const(32)
    if not (isinstance(width, ir.Const) and 0 < width.value <= 32 and width.value & (width.value - 1) == 0):
        return None
    w, arg = width.value, args[at]
    lane = ir.Builtin("lane")
    # A whole warp is one segment: the lane is its own position, and segments start at 0.
    pos = lane if w == 32 else ir.BinOp("&", lane, ir.Const(w - 1))
    base = ir.Const(0) if w == 32 else ir.BinOp("-", lane, pos)
    if kind == "idx":
        src = ir.BinOp("+", base, ir.BinOp("&", arg, ir.Const(w - 1)))
    elif kind == "down":
        src = ir.Select(ir.BinOp("<", ir.BinOp("+", pos, arg), ir.Const(w)), ir.BinOp("+", lane, arg), lane)
    elif kind == "up":
        src = ir.Select(ir.BinOp(">=", pos, arg), ir.BinOp("-", lane, arg), lane)
    else:
        other = ir.BinOp("^", lane, arg)
        src = ir.Select(ir.BinOp("<", other, ir.BinOp("+", base, ir.Const(w))), other, lane)
    return ir.BinOp("+", ir.BinOp("*", ir.Builtin("warp"), ir.Const(32)), src)
