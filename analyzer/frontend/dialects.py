"""The CUDA and Metal vocabularies: kernels, builtins, barriers, address spaces, atomics, shuffles."""

from __future__ import annotations

from lark import Tree

from .. import ir
from .lower import BuiltinVec, CLowering, Pointer, Scalar, Unsupported, Value

_BOTH = frozenset({ir.SHARED, ir.GLOBAL})


class CudaLowering(CLowering):
    lang = "cuda"
    kernel_qualifiers = frozenset({"__global__"})
    shared_qualifiers = frozenset({"__shared__"})
    space_of_qualifier = {"__shared__": ir.SHARED, "__constant__": ir.CONSTANT}
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
        if fn in ("__threadfence", "__threadfence_block", "__threadfence_system"):
            return []  # a fence orders one thread's accesses; it synchronises no one
        return super().call_stmt(node)

    def call_value(self, fn, args, node):
        if fn.startswith("atomic") and args:
            target = args[0]
            ptr = self.rvalue(target)
            if not isinstance(ptr, Pointer):
                raise Unsupported(node, f"'{fn}' on a non-pointer")
            vals = [self.rvalue(a) for a in args[1:]]
            acc = self.make_access(ptr, True, self.span(node), atomic=True)
            acc.value = ir.Call(fn, tuple(self._scalar(v) for v in vals))
            self.pending.append(ir.MemOp(acc))
            return Scalar(self.opaque(f"result of {fn}"), "int")
        if fn.startswith("__shfl") or fn in ("__activemask", "__ballot_sync", "__any_sync", "__all_sync"):
            for a in args:
                self.rvalue(a)  # reads in the arguments still happen
            return Scalar(self.opaque(f"result of {fn}"), "float")
        if fn in ("__syncthreads_count", "__syncthreads_and", "__syncthreads_or"):
            raise Unsupported(node, f"'{fn}' inside an expression")
        return None


class MetalLowering(CLowering):
    lang = "metal"
    kernel_qualifiers = frozenset({"kernel"})
    shared_qualifiers = frozenset({"threadgroup"})
    space_of_qualifier = {"device": ir.GLOBAL, "threadgroup": ir.SHARED, "constant": ir.CONSTANT,
                          "thread": ir.PRIVATE}
    barrier_names = ("threadgroup_barrier", "simdgroup_barrier")
    # Attribute-bound builtins: attribute -> (vector prefix or scalar builtin)
    _attrs = {
        "thread_position_in_threadgroup": "tid",
        "threadgroup_position_in_grid": "bid",
        "threads_per_threadgroup": "bdim",
        "threadgroups_per_grid": "gdim",
    }

    def _builtin_param(self, name, ty, attrs):
        for a in attrs:
            attr = str(a.children[0])
            if attr in self._attrs:
                prefix = self._attrs[attr]
                if ty.base.endswith(("2", "3")):
                    return BuiltinVec(prefix)
                return Scalar(ir.Builtin(f"{prefix}.x"), "uint")
            if attr == "thread_index_in_simdgroup":
                return Scalar(ir.Builtin("lane"), "uint")
            if attr == "simdgroup_index_in_threadgroup":
                return Scalar(ir.Builtin("warp"), "uint")
            if attr == "thread_index_in_threadgroup":
                return Scalar(ir.Builtin("linear_tid"), "uint")
            if attr == "threads_per_simdgroup":
                return Scalar(ir.Const(32), "uint")
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
        words = {str(t) for t in node.scan_values(lambda v: isinstance(v, str))}
        spaces = set()
        if any("mem_device" in w for w in words):
            spaces.add(ir.GLOBAL)
        if any("mem_threadgroup" in w for w in words):
            spaces.add(ir.SHARED)
        return frozenset(spaces)

    def barrier(self, fn, node):
        if fn in ("threadgroup_barrier", "metal::threadgroup_barrier"):
            return ir.Barrier(ir.BLOCK, self._flags(node), self.span(node), self._text(node))
        if fn in ("simdgroup_barrier", "metal::simdgroup_barrier"):
            return ir.Barrier(ir.WARP, self._flags(node), self.span(node), self._text(node))
        return None

    def _text(self, node) -> str:
        n = self.span(node).line
        line = self.lines[n - 1] if 0 < n <= len(self.lines) else ""
        return line.strip().rstrip(";")

    def call_value(self, fn, args, node):
        if fn in ("select", "metal::select") and len(args) == 3:
            # select(a, b, c) is c ? b : a
            a, b = self.rvalue(args[0]), self.rvalue(args[1])
            c = self.cond(args[2])
            return Scalar(ir.Select(c, self._scalar(b), self._scalar(a)), getattr(a, "ty", "int"))
        if fn.startswith(("simd_", "quad_")):
            for a in args:
                self.rvalue(a)
            return Scalar(self.opaque(f"result of {fn}"), "float")
        if fn.startswith("atomic_"):
            raise Unsupported(node, f"Metal atomic '{fn}'")
        return None


def lowering_for(lang: str):
    return {"cuda": CudaLowering, "metal": MetalLowering}[lang]

