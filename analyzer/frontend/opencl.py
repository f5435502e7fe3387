"""The OpenCL C vocabulary over the C core: kernels and address spaces, work-item functions, barriers
and the memory their fence flags order, vector literals and swizzles, vload/vstore, conversions,
reinterpretations and atomics.

Stated assumptions (docs/usage.md): no global work offset (`get_global_id(d)` is
`get_group_id(d) * get_local_size(d) + get_local_id(d)`, as TVM launches), uniform work-groups, and no
sub-group size: sub-groups are not assumed to run in lockstep (a sub-group barrier orders no two
work-items), and the sub-group builtins (ids, sizes) are refused. A collective of values
(`sub_group_reduce_add`, `work_group_broadcast`) is an unknown value per work-item, ordering no memory.
"""

from __future__ import annotations

import re
from dataclasses import replace

from lark import Token, Tree

from analyzer import ir
from analyzer.frontend import atomics, cl_subgroups
from analyzer.frontend.c_tree import Unsupported, kind, tokens_of
from analyzer.frontend.c_values import LocalRef, ParamStruct, Pointer, Scalar, Value, Vector, _add, _mul, const_int
from analyzer.frontend.lower import CLowering
from analyzer.frontend.types import size_of, vector_shape

_BOTH = frozenset({ir.SHARED, ir.GLOBAL})
# The fence flags and the memory each orders (image memory holds no access the IR models). Their
# values are the ones the flags are given as numbers here, so that a constant expression decodes.
_FENCE_FLAGS = {"CLK_LOCAL_MEM_FENCE": (1, frozenset({ir.SHARED})), "CLK_GLOBAL_MEM_FENCE": (2, frozenset({ir.GLOBAL})),
                "CLK_IMAGE_MEM_FENCE": (4, frozenset())}
_NUMBERED = {name: n for n, name in enumerate(
    ("memory_order_relaxed", "memory_order_acquire", "memory_order_release", "memory_order_acq_rel",
     "memory_order_seq_cst"))} | {name: 10 + n for n, name in enumerate(
    ("memory_scope_work_item", "memory_scope_sub_group", "memory_scope_work_group", "memory_scope_device",
     "memory_scope_all_svm_devices", "memory_scope_all_devices"))}
# A memory scope narrower than the work-group orders nothing between two work-items of it (no
# sub-group size is assumed).
_NARROW_SCOPES = frozenset({"memory_scope_work_item", "memory_scope_sub_group"})

_DIM_BUILTINS = {"get_local_id": "tid", "get_group_id": "bid", "get_local_size": "bdim", "get_num_groups": "gdim",
                 "get_enqueued_local_size": "bdim"}
# What a work-item function returns for a dimension index >= get_work_dim(): 0 for ids, 1 for sizes.
_OUT_OF_RANGE = {"tid": 0, "bid": 0, "bdim": 1, "gdim": 1, "gid": 0, "gsize": 1, "goff": 0}

# Collectives whose arguments and result are values (cl_khr_subgroups, OpenCL 2.0's work-group
# functions, cl_khr_subgroup_{ballot,non_uniform_arithmetic,clustered_reduce,shuffle,shuffle_relative,
# non_uniform_vote}); block reads and writes, pipes and the rest stay refused.
_VALUE_COLLECTIVE = re.compile(
    r"^(sub_group|work_group)_(?:(?:non_uniform_|clustered_)?(?:reduce|scan_inclusive|scan_exclusive)_"
    r"(?:add|min|max|mul|and|or|xor|logical_and|logical_or|logical_xor)"
    r"|(?:non_uniform_)?broadcast(?:_first)?|shuffle(?:_xor|_up|_down)?|(?:non_uniform_)?(?:all|any|all_equal)"
    r"|elect|ballot|inverse_ballot|ballot_bit_extract|ballot_bit_count|ballot_inclusive_scan"
    r"|ballot_exclusive_scan|ballot_find_lsb|ballot_find_msb)$")

_CONVERT = re.compile(r"^convert_([a-z]+(?:2|3|4|8|16)?)(?:_sat)?(?:_rt[ezpn])?$")
_AS = re.compile(r"^as_([a-z]+(?:2|3|4|8|16)?)$")
_VLOAD = re.compile(r"^(vload|vstore)(2|3|4|8|16)$")
_VHALF = re.compile(r"^(vloada?|vstorea?)_half(2|3|4|8|16)?(?:_rt[ezpn])?$")
_SWIZZLE_XYZW = re.compile(r"^[xyzw]{1,4}$|^[rgba]{1,4}$")
_SWIZZLE_S = re.compile(r"^[sS]([0-9a-fA-F]{1,16})$")
_LANE = {c: i for i, c in enumerate("xyzw")} | {c: i for i, c in enumerate("rgba")}

# Atomic read-modify-writes: OpenCL 1.x `atomic_*` and the `atom_*` extension spellings, C11-style
# `atomic_fetch_*` with and without `_explicit`.
_RMW = frozenset({"add", "sub", "xchg", "inc", "dec", "cmpxchg", "min", "max", "and", "or", "xor"})
_FETCH_ADD = frozenset({"atomic_add", "atom_add", "atomic_fetch_add"})
_FETCH_SUB = frozenset({"atomic_sub", "atom_sub", "atomic_fetch_sub"})
_INCREMENT = frozenset({"atomic_inc", "atom_inc"})
_DECREMENT = frozenset({"atomic_dec", "atom_dec"})


def _scope(vals) -> str | None:
    """An `_explicit` atomic's memory scope argument (after the order), where it is narrower than
    the device: ir.BLOCK for the work-group's, ir.WARP for a sub-group's or a work-item's (atomic
    with no other work-item the analysis can name)."""
    for v in vals:
        if isinstance(v, Scalar) and isinstance(v.expr, ir.Const):
            if v.expr.value == _NUMBERED["memory_scope_work_group"]:
                return ir.BLOCK
            if v.expr.value in (_NUMBERED[s] for s in _NARROW_SCOPES):
                return ir.WARP
    return None


def _atomic_kind(fn: str) -> str | None:
    """'rmw', 'load', 'store', 'init', 'cas' or 'fence' for an atomic builtin, None otherwise."""
    base = fn[:-len("_explicit")] if fn.endswith("_explicit") else fn
    if base in ("atomic_load",):
        return "load"
    if base in ("atomic_store",):
        return "store"
    if base == "atomic_init":
        return "init"
    if base in ("atomic_compare_exchange_strong", "atomic_compare_exchange_weak"):
        return "cas"
    if base in ("atomic_work_item_fence",):
        return "fence"
    if base in ("atomic_exchange", "atomic_flag_test_and_set", "atomic_flag_clear") or base.startswith("atomic_fetch_"):
        return "rmw"
    for prefix in ("atomic_", "atom_"):
        if fn.startswith(prefix) and fn[len(prefix):] in _RMW:
            return "rmw"
    return None


class OpenClLowering(CLowering):
    lang = "opencl"
    kernel_qualifiers = frozenset({"__kernel", "kernel"})
    shared_qualifiers = frozenset({"__local", "local"})
    space_of_qualifier = {"__global": ir.GLOBAL, "global": ir.GLOBAL, "__local": ir.SHARED, "local": ir.SHARED,
                          "__constant": ir.CONSTANT, "constant": ir.CONSTANT, "__private": ir.PRIVATE,
                          "private": ir.PRIVATE}
    device_variable_qualifiers = {"__global": ir.GLOBAL, "global": ir.GLOBAL, "__constant": ir.CONSTANT,
                                  "constant": ir.CONSTANT}
    constant_space_is_immutable = True   # __constant memory is read-only to kernels
    barrier_names = ("barrier", "work_group_barrier", "sub_group_barrier")
    warp_size = 1   # no sub-group size and no lockstep is assumed
    # Names whose value differs between work-items: a function using them is inlined.
    _builtins = dict.fromkeys(("get_local_id", "get_group_id", "get_global_id", "get_local_linear_id",
                               "get_sub_group_id", "get_sub_group_local_id"))

    # ---------- kernels ----------

    def _lower_kernel(self, fn, tparams=(), targs=None):
        kernel = super()._lower_kernel(fn, tparams, targs)
        for attr in _gnu_attrs(fn.children[0]):
            if str(attr.children[0]) != "reqd_work_group_size":
                continue   # work_group_size_hint, vec_type_hint, ...: hints, no promise
            args = [a for a in attr.children[1:] if a is not None]
            try:
                sizes = [const_int(self._scalar(self.rvalue(a))) for a in args]
            except Unsupported as exc:   # `_scalar` raises without a node: place it at the attribute
                exc.node = exc.node if exc.node is not None else attr
                raise
            if len(sizes) != 3 or any(s is None or s < 1 for s in sizes):
                raise Unsupported(attr, "reqd_work_group_size that is not three positive constants")
            kernel.block_dim = dict(zip("xyz", sizes))
        return kernel

    def builtin_name(self, name: str) -> Value | None:
        if name in _FENCE_FLAGS:
            return Scalar(ir.Const(_FENCE_FLAGS[name][0]), "int")
        if name in _NUMBERED:
            return Scalar(ir.Const(_NUMBERED[name]), "int")
        return None

    def _work_item(self, fn: str, args: list, node) -> Scalar | None:
        if fn == "get_work_dim":
            if "get_work_dim()" not in self.kernel.params:
                self.kernel.params.append("get_work_dim()")
                self.kernel.param_ranges["get_work_dim()"] = (1, 3)
            return Scalar(ir.Param("get_work_dim()"), "uint")
        if fn == "get_local_linear_id":
            return Scalar(ir.Builtin("linear_tid"), "size_t")
        if fn.startswith(("get_sub_group", "get_num_sub_groups", "get_max_sub_group", "get_enqueued_num_sub")):
            sub = cl_subgroups.value(self.kernel, fn)
            if sub is None or args:
                raise Unsupported(node, f"'{fn}'" + (f" with {len(args)} arguments" if sub is not None else ""))
            return Scalar(sub, "uint")
        if fn in ("get_global_linear_id",):
            raise Unsupported(node, f"'{fn}'")
        what = _DIM_BUILTINS.get(fn) or {"get_global_id": "gid", "get_global_size": "gsize",
                                         "get_global_offset": "goff"}.get(fn)
        if what is None:
            return None
        if len(args) != 1:
            raise Unsupported(node, f"'{fn}' with {len(args)} arguments")
        dim = self._scalar(self.rvalue(args[0]))
        per_dim = [self._dim_value(what, d) for d in "xyz"]
        n = const_int(dim)
        if n is not None:
            return Scalar(per_dim[n] if 0 <= n < 3 else ir.Const(_OUT_OF_RANGE[what]), "size_t")
        value: ir.Expr = ir.Const(_OUT_OF_RANGE[what])
        for i in (2, 1, 0):   # a dimension chosen at run time: a choice among the three
            value = ir.Select(ir.BinOp("==", dim, ir.Const(i)), per_dim[i], value)
        return Scalar(value, "size_t")

    @staticmethod
    def _dim_value(what: str, d: str) -> ir.Expr:
        if what == "gid":   # no global work offset (stated assumption)
            return ir.BinOp("+", ir.BinOp("*", ir.Builtin(f"bid.{d}"), ir.Builtin(f"bdim.{d}")), ir.Builtin(f"tid.{d}"))
        if what == "gsize":
            return ir.BinOp("*", ir.Builtin(f"gdim.{d}"), ir.Builtin(f"bdim.{d}"))
        if what == "goff":
            return ir.Const(0)
        return ir.Builtin(f"{what}.{d}")

    # ---------- barriers ----------

    def _flags(self, args: list) -> frozenset[str]:
        """The memory a barrier's fence flags order: a constant decoded bit by bit, else the union of
        the flags named; flags read from elsewhere order both (no warning on a guess)."""
        if not args:
            return _BOTH
        try:
            value = const_int(self._scalar(self.rvalue(args[0])))
        except Unsupported:
            value = None
        if value is not None:
            return frozenset().union(*(spaces for bit, spaces in _FENCE_FLAGS.values() if value & bit))
        words = {str(t) for t in tokens_of(args[0])}
        named = [_FENCE_FLAGS[w][1] for w in words if w in _FENCE_FLAGS]
        return frozenset().union(*named) if named else _BOTH

    def barrier(self, fn, node):
        if fn not in self.barrier_names:
            return None
        args = list(node.children[1].children) if node.children[1] is not None else []
        spaces = self._flags(args)
        if len(args) > 1 and {str(t) for t in tokens_of(args[1])} & _NARROW_SCOPES:
            spaces = frozenset()
        scope = ir.WARP if fn == "sub_group_barrier" else ir.BLOCK
        return ir.Barrier(scope, spaces, self.span(node), self.call_text(node))

    def call_stmt(self, node):
        fn = self._callee_name(node)
        if fn in ("mem_fence", "read_mem_fence", "write_mem_fence", "atomic_work_item_fence"):
            return []   # a fence orders one work-item's accesses; it synchronises no one
        m = _VLOAD.match(fn or "") or _VHALF.match(fn or "")
        if m and m.group(1).startswith("vstore"):
            return self._vstore(fn, m, node)
        return super().call_stmt(node)

    # ---------- values ----------

    def call_value(self, fn, args, node):
        item = self._work_item(fn, args, node)
        if item is not None:
            return item
        m = _CONVERT.match(fn)
        if m and (vector_shape(m.group(1)) or size_of(m.group(1)) is not None):
            (arg,) = self._args(fn, args, 1, node)
            return self._convert(self.rvalue(arg), m.group(1))
        m = _AS.match(fn)
        if m and (vector_shape(m.group(1)) or size_of(m.group(1)) is not None):
            (arg,) = self._args(fn, args, 1, node)
            return _reinterpret(self, self.rvalue(arg), m.group(1))
        m = _VLOAD.match(fn) or _VHALF.match(fn)
        if m:
            if m.group(1).startswith("vstore"):
                raise Unsupported(node, f"'{fn}' inside an expression")
            return self._vload(fn, m, args, node)
        if fn == "select" and len(args) == 3:
            return self._select(args)
        if fn in ("mul24", "mad24") and len(args) == (2 if fn == "mul24" else 3):
            # the product of 24-bit integers (the functions' precondition), exact: an index, often
            vals = [self.rvalue(a) for a in args]
            if all(isinstance(v, Scalar) for v in vals):
                prod = self._binop("*", vals[0], vals[1], node)
                return self._binop("+", prod, vals[2], node) if fn == "mad24" else prod
        kind_ = _atomic_kind(fn)
        if kind_ is not None:
            return self._atomic(fn, kind_, args, node)
        if fn.startswith(("sub_group_", "work_group_")) and fn not in OpenClLowering.barrier_names:
            if _VALUE_COLLECTIVE.match(fn):
                return OpenClLowering._value_collective(self, fn, args, node)   # also from the clang lowering
            raise Unsupported(node, f"work-group or sub-group collective '{fn}'")
        return None

    def _value_collective(self, fn: str, args: list, node) -> Value:
        """`sub_group_reduce_add(x)`, `work_group_broadcast(x, id)`, `sub_group_shuffle(x, i)`...:
        values exchanged between work-items, so per work-item an unknown value (not a function of
        its own operands). No memory is ordered (the specification promises none: no barrier).
        The memory reads in the arguments are statements of their own, since the result names none
        of them; a pointer argument (a block read) is refused."""
        vals = [self.rvalue(a) for a in args]
        if any(not isinstance(v, (Scalar, Vector)) for v in vals):
            raise Unsupported(node, f"'{fn}' of a pointer or composite value")
        span = self.span(node)
        for v in vals:
            for e in (v.comps if isinstance(v, Vector) else (v.expr,)):
                if ir.reads_memory(e):
                    self.pending.append(ir.Assign(self.fresh_var("collective_arg"), e, span))
        opaque = lambda: ir.Opaque(f"result of {fn}", next(self.opaque_ids))  # noqa: E731
        if fn.endswith(("_all", "_any", "_elect", "_all_equal")) or "ballot_bit" in fn or "ballot_find" in fn:
            return Scalar(opaque(), "int")
        if fn.endswith("_ballot"):
            return Vector(tuple(opaque() for _ in range(4)), "uint4")
        if not vals:
            raise Unsupported(node, f"'{fn}' without arguments")
        if isinstance(vals[0], Vector):
            return Vector(tuple(opaque() for _ in vals[0].comps), vals[0].ty)
        return Scalar(opaque(), vals[0].ty)

    @staticmethod
    def _args(fn: str, args: list, n: int, node) -> list:
        if len(args) != n:
            raise Unsupported(node, f"'{fn}' with {len(args)} arguments")
        return args

    def _select(self, args):
        """select(a, b, c): c ? b : a; lane by lane on vectors, where a lane's most significant bit
        decides."""
        a, b, c = (self.rvalue(x) for x in args)
        if isinstance(c, Vector):
            n = len(c.comps)
            ca, cb = self._components(a, n), self._components(b, n)
            return Vector(tuple(ir.Select(ir.BinOp("<", k, ir.Const(0)), y, x) for x, y, k in zip(ca, cb, c.comps)),
                          a.ty if isinstance(a, Vector) else c.ty)
        cond = self._scalar(c)
        if isinstance(a, Vector) or isinstance(b, Vector):
            n = len(a.comps) if isinstance(a, Vector) else len(b.comps)
            ca, cb = self._components(a, n), self._components(b, n)
            return Vector(tuple(ir.Select(cond, y, x) for x, y in zip(ca, cb)), a.ty if isinstance(a, Vector) else b.ty)
        return Scalar(ir.Select(cond, self._scalar(b), self._scalar(a)), self._result_type(a, b))

    def _vector_pointer(self, fn: str, m, offset_node, ptr_node, node) -> tuple[Pointer, str]:
        """The pointer vloadN/vstoreN access (n elements from ptr + offset * n) typed as the vector,
        and the element type of the values (float for the _half forms)."""
        ptr = self.rvalue(ptr_node)
        if not isinstance(ptr, Pointer):
            raise Unsupported(node, f"'{fn}' on a non-pointer")
        half = "_half" in fn
        elem = "half" if half else ptr.elem
        if vector_shape(elem) or size_of(elem) is None:
            raise Unsupported(node, f"'{fn}' on a pointer to {elem}")
        n = int(m.group(2) or 1)
        stride = 4 if n == 3 and m.group(1) in ("vloada", "vstorea") else n   # vloada_half3 is 4-aligned
        off = self._scalar(self.rvalue(offset_node))
        vty = f"{elem}{n}" if n > 1 else elem
        moved = replace(ptr, elem=vty, offset=_add(ptr.offset, _mul(off, stride * size_of(elem))), inner=())
        return moved, ("float" if half else elem)

    def _vload(self, fn, m, args, node):
        off_n, ptr_n = self._args(fn, args, 2, node)
        ptr, elem = self._vector_pointer(fn, m, off_n, ptr_n, node)
        val = self.load(ptr, self.span(node))
        if elem == "float" and "_half" in fn:
            shape = vector_shape(ptr.elem)
            if shape:
                return Vector(tuple(ir.Call("cvt:float", (c,)) for c in val.comps), f"float{shape[1]}")
            return Scalar(ir.Call("cvt:float", (self._scalar(val),)), "float")
        return val

    def _vstore(self, fn, m, node):
        args = list(node.children[1].children) if node.children[1] is not None else []
        val_n, off_n, ptr_n = self._args(fn, args, 3, node)
        val = self.rvalue(val_n)
        ptr, _ = self._vector_pointer(fn, m, off_n, ptr_n, node)
        shape = vector_shape(ptr.elem)
        if shape:
            val = Vector(self._components(val, shape[1]), ptr.elem)
        return [self._access_stmt(ptr, True, val, self.span(node))]

    def _atomic(self, fn, kind_, args, node):
        if kind_ == "fence":
            return Scalar(ir.Const(0), "int")
        if not args:
            raise Unsupported(node, f"'{fn}' without arguments")
        ptr = self.rvalue(args[0])
        if not isinstance(ptr, Pointer):
            raise Unsupported(node, f"'{fn}' on a non-pointer")
        span = self.span(node)
        vals = [self.rvalue(a) for a in args[1:]]
        scope = _scope(vals)
        if kind_ == "load":
            acc = atomics.mark(self.make_access(ptr, False, span, atomic=True), "load", scope)
            return Scalar(ir.Read(acc), ptr.elem)
        if kind_ == "cas":   # (obj, expected*, desired, ...): *expected is read, and written on failure
            expected = vals[0] if vals else None
            if not isinstance(expected, Pointer):
                raise Unsupported(node, f"'{fn}' without a pointer to the expected value")
            self.pending.append(ir.MemOp(self.make_access(expected, False, span)))
            vals = vals[1:2]
        acc = self.make_access(ptr, True, span, atomic=kind_ != "init")   # atomic_init is not atomic
        operands = tuple(self._scalar(v) for v in (vals if kind_ != "store" else vals[:1]))
        acc.value = ir.Call(fn, operands)
        self.pending.append(ir.MemOp(acc))
        if kind_ == "cas":
            self.pending.append(self._access_stmt(expected, True, Scalar(ir.Call(f"result of {fn}", ())), span))
        if kind_ == "store":
            atomics.mark(acc, "store", scope)
        if kind_ in ("store", "init"):
            return Scalar(ir.Const(0), "int")
        base = fn.removesuffix("_explicit")
        step = (operands[0] if base in _FETCH_ADD | _FETCH_SUB and operands
                else ir.Const(1) if base in _INCREMENT | _DECREMENT else None)
        subtract = base in _FETCH_SUB | _DECREMENT
        return Scalar(atomics.fetch_result(fn, next(self.opaque_ids), acc, step, subtract, scope,
                                           unsigned=atomics.unsigned_c(ptr.elem)), "int")

    # ---------- vectors ----------

    def make_access(self, ptr, is_write, span, atomic=False):
        # OpenCL lays a 3-lane vector out as four (sizeof(float3) == 16), the C core as three: an
        # array of them would get wrong offsets. (vload3/vstore3 on scalars are exact.)
        buf = self.kernel.buffers.get(ptr.buffer)
        shape = vector_shape(buf.elem_type) if buf is not None else None
        if shape and shape[1] == 3:
            raise Unsupported(None, f"memory of 3-lane vectors ({buf.elem_type}), which OpenCL lays out as four lanes")
        return super().make_access(ptr, is_write, span, atomic)

    def expr_cast(self, node):
        """`(float4)(a, b, c, d)` and `(float4)(x)`: a vector literal (lanes from the parts, in order)
        and a scalar cast to a vector (every lane the scalar)."""
        ty = self._type_of(node.children[0])
        shape = vector_shape(ty.base) if not ty.ptr else None
        if shape is None:
            return super().expr_cast(node)
        parts, operand = [], node.children[1]
        while isinstance(operand, Tree) and kind(operand) == "comma":
            parts.append(operand.children[1])
            operand = operand.children[0]
        parts.append(operand)
        comps: list[ir.Expr] = []
        for part in reversed(parts):
            val = self.rvalue(part)
            comps.extend(val.comps if isinstance(val, Vector) else (self._scalar(val),))
        if len(comps) == 1:
            comps = comps * shape[1]
        if len(comps) != shape[1]:
            raise Unsupported(node, f"{ty.base} literal with {len(comps)} values")
        return Vector(tuple(comps), ty.base)

    def expr_member(self, node):
        field = str(node.children[1])
        if self._root_is_param_struct(node):
            return super().expr_member(node)
        base = self.rvalue_or_ref(node.children[0])
        if isinstance(base, ParamStruct):
            return super().expr_member(node)
        if isinstance(base, LocalRef) and vector_shape(base.ty):
            elem, n = vector_shape(base.ty)
            comps = tuple(ir.Var(f"{base.name}.{i}") for i in range(n))
        elif isinstance(base, Vector):
            elem, n = vector_shape(base.ty) or ("int", len(base.comps))
            comps = base.comps
        else:
            raise Unsupported(node, f"member '.{field}'")
        lanes = _swizzle(field, n)
        if lanes is None:
            raise Unsupported(node, f"vector component '.{field}' of a {n}-lane vector")
        if len(lanes) == 1:
            return Scalar(comps[lanes[0]], elem)
        return Vector(tuple(comps[i] for i in lanes), f"{elem}{len(lanes)}")

    def store(self, target, val, span):
        if isinstance(target, Tree) and kind(target) == "member":
            base = self.rvalue_or_ref(target.children[0])
            if isinstance(base, LocalRef) and vector_shape(base.ty):
                lanes = _swizzle(str(target.children[1]), vector_shape(base.ty)[1])
                if lanes is None:
                    raise Unsupported(target, f"vector component '.{target.children[1]}'")
                comps = self._components(val, len(lanes)) if len(lanes) > 1 else (self._scalar(val),)
                return [ir.Assign(f"{base.name}.{i}", c, span) for i, c in zip(lanes, comps)]
        return super().store(target, val, span)

    def expr_let_expr(self, node):
        """`(int r = e; f(r))` as TVM 0.27 prints it: r is bound to e's value for the expression."""
        *bindings, body = node.children
        self.scopes.append({})
        try:
            for b in bindings:
                ty = self._type_of(b)
                name = next(str(c) for c in b.children if isinstance(c, Token) and c.type == "NAME")
                ref = LocalRef(self.fresh_var(name), ty.base)
                self.pending.extend(self._assign_local(ref, self.rvalue(b.children[-1]), self.span(b)))
                self.declare_local(name, ref)
            return self.rvalue(body)
        finally:
            self.scopes.pop()


def _gnu_attrs(head: Tree):
    for c in head.children:
        if isinstance(c, Tree) and kind(c) == "gnu_attributes":
            yield from (a for a in c.children if isinstance(a, Tree) and kind(a) == "gnu_attr")


def _swizzle(field: str, n: int) -> tuple[int, ...] | None:
    """The lanes a component selector names: .x .xy .wzyx, .s0 .s37 .sA, .lo .hi .even .odd."""
    if _SWIZZLE_XYZW.match(field):
        lanes = tuple(_LANE[c] for c in field)
    elif (m := _SWIZZLE_S.match(field)):
        lanes = tuple(int(c, 16) for c in m.group(1))
    elif field in ("lo", "hi", "even", "odd") and n >= 2:
        half = (n + 1) // 2   # a 3-lane vector is 4 lanes wide here: .hi is (z, undefined)
        lanes = {"lo": tuple(range(half)), "hi": tuple(range(half, min(2 * half, n))),
                 "even": tuple(range(0, n, 2)), "odd": tuple(range(1, n, 2))}[field]
    else:
        return None
    return lanes if lanes and all(i < n for i in lanes) else None


def _reinterpret(lowering, val: Value, ty: str) -> Value:
    """as_T(x): x's bits read as T, lane by lane when both have as many lanes, otherwise one opaque
    function of all of x's lanes."""
    comps = val.comps if isinstance(val, Vector) else (lowering._scalar(val),)
    shape = vector_shape(ty)
    lanes = shape[1] if shape else 1
    elem = shape[0] if shape else ty
    if lanes == len(comps):
        out = tuple(ir.Call(f"as_{elem}", (c,)) for c in comps)
    else:
        whole = ir.Call(f"as_{ty}", (ir.Call("vec", tuple(comps)),))
        out = tuple(ir.Call(f"lane{i}", (whole,)) for i in range(lanes))
    return Vector(out, ty) if shape else Scalar(out[0], ty)


