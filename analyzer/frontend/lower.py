"""Lower a C-family parse tree (CUDA, Metal) into the kernel IR.

The core class translates C syntax; each dialect subclass names its kernels, builtins, barriers,
address spaces and atomics. Values are tracked with just enough typing to turn pointer arithmetic,
casts and vector accesses into byte-addressed accesses of a named buffer.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, replace

from lark import Token, Tree

from analyzer import ir
from analyzer.errors import KernelraceError
from analyzer.frontend.types import COMPONENTS, SCALAR_SIZES, normalize, size_of, vector_shape

_PREFIX = "c_core__"


def kind(t: Tree) -> str:
    d = t.data
    return d[len(_PREFIX):] if d.startswith(_PREFIX) else d


_KEYWORDS = frozenset({"IF", "WHILE", "FOR", "DO", "BREAK", "CONTINUE", "RETURN"})


def tokens_of(node) -> list[Token]:
    """The tokens under a node, in order, walked with a stack: Lark's scan_values recurses once
    per level and a hostile file can nest thousands of levels."""
    out: list[Token] = []
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, Tree):
            stack.extend(reversed(n.children))
        elif isinstance(n, Token):
            out.append(n)
    return out


def position(node) -> tuple[int, int]:
    """(line, column) of a node's first token. Computed on demand for the few nodes that need a
    span: Lark's propagate_positions would do it for every node and double the parse time."""
    while isinstance(node, Tree):
        node = next((c for c in node.children if c is not None), None)
    if isinstance(node, Token) and node.line is not None:
        return node.line, node.column
    return 0, 0


# Statements and expressions nested deeper than this are refused where they pass the limit: the
# lowering (and the analysis of what it produces) recurses once per level, and Python's stack would
# not hold a few thousand. Code people and TVM write nests a few dozen levels.
MAX_NESTING = 200


class Unsupported(Exception):
    def __init__(self, node, what: str):
        super().__init__(what)
        self.node = node
        self.what = what


# ---------- typed values produced while lowering expressions ----------

@dataclass(frozen=True)
class Scalar:
    expr: ir.Expr
    ty: str = "int"


@dataclass(frozen=True)
class Vector:
    comps: tuple[ir.Expr, ...]
    ty: str


@dataclass(frozen=True)
class Pointer:
    buffer: str
    space: str
    elem: str           # pointee type
    offset: ir.Expr     # bytes from the buffer's base
    inner: tuple[int, ...] = ()  # remaining dimensions of a multi-dimensional array


@dataclass(frozen=True)
class BuiltinVec:
    prefix: str         # "tid", "bid", "bdim", "gdim"


@dataclass(frozen=True)
class ParamStruct:
    name: str           # Metal constant argument struct: arg.H[0] is a uniform parameter


@dataclass(frozen=True)
class LocalRef:
    """A local scalar or vector variable (IR variable names are unique per declaration)."""
    name: str
    ty: str


@dataclass(frozen=True)
class SharedScalar:
    """A `__shared__ float total;` scalar: every use is a memory access of a one-element buffer."""
    ptr: "Pointer"


@dataclass(frozen=True)
class FuncRef:
    name: str


Value = Scalar | Vector | Pointer | BuiltinVec | ParamStruct | LocalRef | SharedScalar | FuncRef


@dataclass
class TypeInfo:
    base: str
    ptr: int = 0
    space: str | None = None
    ref: bool = False
    quals: tuple[str, ...] = ()


def _add(a: ir.Expr, b: ir.Expr) -> ir.Expr:
    if isinstance(b, ir.Const) and b.value == 0:
        return a
    if isinstance(a, ir.Const) and a.value == 0:
        return b
    if isinstance(a, ir.Const) and isinstance(b, ir.Const):
        return ir.Const(a.value + b.value)
    return ir.BinOp("+", a, b)


def _mul(a: ir.Expr, k: int) -> ir.Expr:
    if k == 1:
        return a
    if isinstance(a, ir.Const):
        return ir.Const(a.value * k)
    return ir.BinOp("*", a, ir.Const(k))


class CLowering:
    """Dialect-independent lowering; subclasses fill in the dialect's vocabulary."""

    lang = "c"
    kernel_qualifiers: frozenset[str] = frozenset()
    shared_qualifiers: frozenset[str] = frozenset()
    warp_size = 32

    def __init__(self, tree: Tree, text: str, filename: str):
        self.tree = tree
        self.filename = filename
        self.lines = text.splitlines()
        self.functions: dict[str, Tree] = {}
        self.kernels: list[Tree] = []
        self.access_ids = itertools.count(1)
        self.loop_ids = itertools.count(1)
        self.opaque_ids = itertools.count(1)
        self.nesting = 0
        self._collect(tree.children)

    # ---------- top level ----------
    def _collect(self, items) -> None:
        for item in items:
            if not isinstance(item, Tree):
                continue
            k = kind(item)
            if k == "function_def":
                head = item.children[0]
                name = self._fn_name(head)
                quals = self._spec_words(head)
                if quals & self.kernel_qualifiers:
                    self.kernels.append(item)
                else:
                    self.functions[name] = item
            elif k == "namespace_item":
                self._collect(item.children[1:])

    @staticmethod
    def _fn_name(head: Tree) -> str:
        return next(str(c) for c in head.children if isinstance(c, Token) and c.type == "NAME")

    def _spec_words(self, node: Tree) -> set[str]:
        words = set()
        for c in node.children:
            if isinstance(c, Tree) and kind(c) == "spec":
                for q in c.children:
                    if isinstance(q, Tree) and kind(q) == "qualifier":
                        words.add(str(q.children[0]))
        return words

    def lower(self) -> list[ir.Kernel]:
        return [self._lower_kernel(k) for k in self.kernels]

    def span(self, node) -> ir.Span:
        line, col = position(node)
        return ir.Span(self.filename, line, col)

    # ---------- declarations ----------
    def _type_of(self, node: Tree) -> TypeInfo:
        """Type of a param/decl/type_name node: its specs, type_core and pointer declarators."""
        quals: list[str] = []
        base = "int"
        ptr = 0
        ref = False
        for c in node.children:
            if not isinstance(c, Tree):
                continue
            k = kind(c)
            if k == "spec":
                for q in c.children:
                    if isinstance(q, Tree) and kind(q) == "qualifier":
                        quals.append(str(q.children[0]))
            elif k == "type_core":
                words = [str(w) for w in tokens_of(c)]
                base = normalize(words) if any(w in ("unsigned", "signed", "long", "short") for w in words) else words[0]
            elif k == "elaborated_type":
                base = str(c.children[-1])
            elif k == "pointer":
                ptr += 1
            elif k == "reference":
                ref = True
        space = None
        for q in quals:
            if q in self.space_of_qualifier:
                space = self.space_of_qualifier[q]
        return TypeInfo(base, ptr, space, ref, tuple(quals))

    space_of_qualifier: dict[str, str] = {}

    def _lower_kernel(self, fn: Tree) -> ir.Kernel:
        head, body = fn.children
        name = self._fn_name(head)
        self.kernel = ir.Kernel(name=name, file=self.filename, lang=self.lang, body=[], buffers={},
                                params=[], warp_size=self.warp_size, source_lines=self.lines)
        self.scopes: list[dict[str, Value]] = [{}]
        self.var_counts: dict[str, int] = {}
        self.private: dict[str, ir.Buffer] = {}
        self.inline_depth = 0
        self.pending: list[ir.Stmt] = []
        params = next(c for c in head.children if isinstance(c, Tree) and kind(c) == "params")
        for p in params.children:
            if p is not None:
                self._declare_param(p)
        self.kernel.body = self._block(body)
        return self.kernel

    def _declare_param(self, p: Tree) -> None:
        ty = self._type_of(p)
        names = [c for c in p.children if isinstance(c, Token) and c.type == "NAME"]
        if not names:
            return
        name = str(names[0])
        attrs = [c for c in p.children if isinstance(c, Tree) and kind(c) == "attribute"]
        bound = self._builtin_param(name, ty, attrs)
        if bound is not None:
            self.scopes[0][name] = bound
            return
        if ty.ptr:
            space = ty.space or ir.GLOBAL
            if space == ir.CONSTANT or "const" in ty.quals and space != ir.GLOBAL:
                space = ir.CONSTANT
            size = size_of(ty.base) or 4
            self.kernel.buffers[name] = ir.Buffer(name, space, ty.base, size)
            self.scopes[0][name] = Pointer(name, space, ty.base, ir.Const(0))
        elif size_of(ty.base) is None and ty.base not in SCALAR_SIZES:
            # A struct passed by constant reference: its fields are uniform parameters.
            self.scopes[0][name] = ParamStruct(name)
        else:
            self.kernel.params.append(name)
            self.scopes[0][name] = Scalar(ir.Param(name), ty.base)

    def _builtin_param(self, name, ty, attrs) -> Value | None:
        return None

    def declare_local(self, name: str, value: Value) -> None:
        self.scopes[-1][name] = value

    def fresh_var(self, name: str) -> str:
        n = self.var_counts.get(name, 0)
        self.var_counts[name] = n + 1
        return name if n == 0 else f"{name}#{n}"

    def lookup(self, name: str, node) -> Value:
        for scope in reversed(self.scopes):
            if name in scope:
                return scope[name]
        builtin = self.builtin_name(name)
        if builtin is not None:
            return builtin
        if name in self.functions:
            return FuncRef(name)
        return FuncRef(name)  # unknown names are treated as external pure functions when called

    def builtin_name(self, name: str) -> Value | None:
        return None

    # ---------- statements ----------
    def _block(self, node: Tree) -> list[ir.Stmt]:
        self.scopes.append({})
        out: list[ir.Stmt] = []
        for s in node.children:
            out.extend(self.stmt(s))
        self.scopes.pop()
        return out

    def _flush(self, stmts: list[ir.Stmt]) -> list[ir.Stmt]:
        pending, self.pending = self.pending, []
        return pending + stmts

    def stmt(self, node) -> list[ir.Stmt]:
        if node is None or not isinstance(node, Tree):
            return []
        return self._dispatch(node, "stmt", "statement")

    def _dispatch(self, node, prefix: str, what: str):
        """Lower `node` with its `prefix_KIND` method, one nesting level deeper; an Unsupported
        raised without a node (by `_scalar`) is placed at this, the innermost, node."""
        k = kind(node)
        method = getattr(self, f"{prefix}_{k}", None)
        if method is None:
            raise Unsupported(node, f"{what} '{k}'")
        if self.nesting >= MAX_NESTING:
            raise Unsupported(node, f"statements and expressions nested too deeply (more than {MAX_NESTING} levels)")
        self.nesting += 1
        try:
            return method(node)
        except Unsupported as exc:
            if exc.node is None:
                exc.node = node
            raise
        finally:
            self.nesting -= 1

    @staticmethod
    def parts(node: Tree) -> list:
        """A statement's children without its keywords (kept in the tree for positions only)."""
        return [c for c in node.children if not (isinstance(c, Token) and c.type in _KEYWORDS)]

    def stmt_compound_stmt(self, node):
        return self._block(node)

    def stmt_empty_stmt(self, node):
        return []

    def stmt_pragma_stmt(self, node):
        return []

    def stmt_expr_stmt(self, node):
        expr = node.children[0]
        if expr is None:
            return []
        return self._flush(self.effect(expr))

    def stmt_break_stmt(self, node):
        return [ir.Break(self.span(node))]

    def stmt_continue_stmt(self, node):
        return [ir.Continue(self.span(node))]

    def stmt_return_stmt(self, node):
        pre: list[ir.Stmt] = []
        parts = self.parts(node)
        if parts and parts[0] is not None:
            val = self.rvalue(parts[0])
            if self.inline_depth and isinstance(val, (Scalar, Vector)):
                pre.append(ir.Assign(self.return_var, self._scalar(val), self.span(node)))
            elif isinstance(val, Scalar):
                pre.append(ir.Eval(val.expr, self.span(node)))
        return self._flush(pre) + [ir.Return(self.span(node))]

    def stmt_if_stmt(self, node):
        parts = self.parts(node)
        cond_n, then_n = parts[0], parts[1]
        else_n = parts[2] if len(parts) > 2 else None
        cond = self.cond(cond_n)
        pre = self._flush([])
        self.scopes.append({})
        then = self.stmt(then_n)
        self.scopes.pop()
        self.scopes.append({})
        orelse = self.stmt(else_n) if else_n is not None else []
        self.scopes.pop()
        return pre + [ir.If(cond, then, orelse, self.span(node))]

    def stmt_while_stmt(self, node):
        cond_n, body_n = self.parts(node)
        cond = self.cond(cond_n)
        if self.pending:
            raise Unsupported(cond_n, "side effect in a loop condition")
        if isinstance(cond, ir.Const) and cond.value != 0:
            cond = None
        self.scopes.append({})
        body = self.stmt(body_n)
        self.scopes.pop()
        return [ir.Loop([], cond, [], body, self.span(node), next(self.loop_ids))]

    def stmt_do_stmt(self, node):
        raise Unsupported(node, "do-while loop")

    def stmt_for_stmt(self, node):
        init_n, cond_n, upd_n, body_n = self.parts(node)
        self.scopes.append({})
        init = self.stmt(init_n)
        cond = self.cond(cond_n) if cond_n is not None else None
        if self.pending:
            raise Unsupported(cond_n, "side effect in a loop condition")
        update = self._flush(self.effect(upd_n)) if upd_n is not None else []
        body = self.stmt(body_n)
        self.scopes.pop()
        return init + [ir.Loop([], cond, update, body, self.span(node), next(self.loop_ids))]

    def stmt_decl_stmt(self, node):
        ty = self._type_of(node)
        out: list[ir.Stmt] = []
        for d in node.children:
            if isinstance(d, Tree) and kind(d) == "init_declarator":
                out.extend(self._declare(d, ty))
        return self._flush(out)

    def _declare(self, d: Tree, ty: TypeInfo) -> list[ir.Stmt]:
        name = str(d.children[0])
        dims = [c for c in d.children if isinstance(c, Tree) and kind(c) == "array_dim"]
        init = d.children[-1] if len(d.children) > 1 and not (isinstance(d.children[-1], Tree) and kind(d.children[-1]) in ("array_dim", "attribute")) else None
        span = self.span(d)
        if dims:
            elem_size = size_of(ty.base) or 4
            space = ir.SHARED if set(ty.quals) & self.shared_qualifiers else ir.PRIVATE
            bname = self.fresh_var(name)
            self.kernel.buffers[bname] = ir.Buffer(bname, space, ty.base, elem_size)
            extents = []
            for dim in dims:
                n = self._scalar(self.rvalue(dim.children[0])) if dim.children[0] is not None else None
                if not isinstance(n, ir.Const):
                    if dim is dims[0] and n is None:
                        extents.append(None)  # `extern __shared__ float s[];`: size set at launch
                        continue
                    raise Unsupported(dim, "array dimension that is not a constant")
                extents.append(n.value)
            if None not in extents:
                total = elem_size
                for n in extents:
                    total *= n
                self.kernel.buffers[bname].size_bytes = total
            extents = extents[1:]
            self.declare_local(name, Pointer(bname, space, ty.base, ir.Const(0), tuple(extents)))
            if init is not None:
                raise Unsupported(init, "array initializer")
            return []
        if ty.ptr:
            if init is None:
                self.declare_local(name, Pointer("?", ir.GLOBAL, ty.base, ir.Const(0)))
                return []
            val = self.rvalue(init)
            if not isinstance(val, Pointer):
                raise Unsupported(init, "pointer initialised from a non-pointer value")
            self.declare_local(name, replace(val, elem=ty.base))
            return []
        if ty.ref:
            raise Unsupported(d, "local reference variable")
        if set(ty.quals) & self.shared_qualifiers:
            bname = self.fresh_var(name)
            size = size_of(ty.base) or 4
            self.kernel.buffers[bname] = ir.Buffer(bname, ir.SHARED, ty.base, size, size_bytes=size)
            ptr = Pointer(bname, ir.SHARED, ty.base, ir.Const(0))
            self.declare_local(name, SharedScalar(ptr))
            if init is not None:
                raise Unsupported(init, "initializer of a shared variable")
            return []
        vname = self.fresh_var(name)
        ref = LocalRef(vname, ty.base)
        out: list[ir.Stmt] = []
        if init is not None:
            val = self.rvalue(init)
            out.extend(self._assign_local(ref, val, span))
        self.declare_local(name, ref)
        return out

    def _assign_local(self, ref: LocalRef, val: Value, span) -> list[ir.Stmt]:
        shape = vector_shape(ref.ty)
        if shape:
            comps = self._components(val, shape[1])
            return [ir.Assign(f"{ref.name}.{i}", c, span) for i, c in enumerate(comps)]
        return [ir.Assign(ref.name, self._scalar(val), span)]

    # ---------- expressions with effects ----------
    def effect(self, node) -> list[ir.Stmt]:
        k = kind(node) if isinstance(node, Tree) else ""
        span = self.span(node)
        if k == "assign":
            target, op, value = node.children
            op = str(op)
            rhs = self.rvalue(value)
            if op != "=":
                cur = self.rvalue(target)
                rhs = self._binop(op[:-1], cur, rhs, node)
            return self.store(target, rhs, span)
        if k in ("pre_incdec", "post_incdec"):
            target = node.children[1] if k == "pre_incdec" else node.children[0]
            op = str(node.children[0] if k == "pre_incdec" else node.children[1])
            cur = self.rvalue(target)
            rhs = self._binop("+" if op == "++" else "-", cur, Scalar(ir.Const(1)), node)
            return self.store(target, rhs, span)
        if k == "call":
            handled = self.call_stmt(node)
            if handled is not None:
                return handled
        val = self.rvalue(node)
        if isinstance(val, Scalar):
            return [ir.Eval(val.expr, span)]
        if isinstance(val, Vector):
            return [ir.Eval(ir.Call("vec", val.comps), span)]
        return []

    def call_stmt(self, node: Tree) -> list[ir.Stmt] | None:
        """Barriers and other calls that are statements; None when the call is a plain value."""
        fn = self._callee_name(node)
        barrier = self.barrier(fn, node)
        if barrier is not None:
            return [barrier]
        return None

    def barrier(self, fn: str | None, node: Tree) -> ir.Barrier | None:
        return None

    def store(self, target, val: Value, span) -> list[ir.Stmt]:
        k = kind(target) if isinstance(target, Tree) else ""
        if k == "name":
            ref = self.lookup(str(target.children[0]), target)
            if isinstance(ref, LocalRef):
                return self._assign_local(ref, val, span)
            if isinstance(ref, SharedScalar):
                return [self._access_stmt(ref.ptr, True, val, span)]
            if isinstance(ref, Pointer) and isinstance(val, Pointer):
                # reassigning a local pointer variable
                self.scopes[-1][str(target.children[0])] = val
                return []
            raise Unsupported(target, f"assignment to '{target.children[0]}'")
        if k == "member":
            base = self.rvalue_or_ref(target.children[0])
            comp = COMPONENTS.get(str(target.children[1]))
            if isinstance(base, LocalRef) and comp is not None:
                return [ir.Assign(f"{base.name}.{comp}", self._scalar(val), span)]
            ptr = self._member_pointer(base, target)
            if ptr is not None:
                return [self._access_stmt(ptr, True, val, span)]
            raise Unsupported(target, "assignment to a struct member")
        if k in ("index", "deref"):
            if k == "index":
                base = self.rvalue_or_ref(target.children[0])
                if isinstance(base, LocalRef) and vector_shape(base.ty):
                    idx = self._scalar(self.rvalue(target.children[1]))
                    if isinstance(idx, ir.Const):
                        return [ir.Assign(f"{base.name}.{idx.value}", self._scalar(val), span)]
                    raise Unsupported(target, "vector lane selected by a variable")
            ptr = self.lvalue_pointer(target)
            return [self._access_stmt(ptr, True, val, span)]
        raise Unsupported(target, f"assignment target '{k}'")

    def _access_stmt(self, ptr: Pointer, is_write: bool, val: Value | None, span, atomic=False) -> ir.MemOp:
        acc = self.make_access(ptr, is_write, span, atomic)
        if val is not None:
            acc.value = self._value_expr(val)
        return ir.MemOp(acc)

    def make_access(self, ptr: Pointer, is_write: bool, span, atomic=False) -> ir.Access:
        if ptr.buffer == "?":
            raise KernelraceError(f"{span}: pointer of unknown origin")
        buf = self.kernel.buffers[ptr.buffer]
        width = size_of(ptr.elem) or buf.elem_size
        return ir.Access(ptr.buffer, ptr.space, ptr.offset, width, is_write, span,
                         elem_size=buf.elem_size, atomic=atomic, id=next(self.access_ids))

    def lvalue_pointer(self, node) -> Pointer:
        k = kind(node)
        if k == "index":
            base = self.rvalue(node.children[0])
            if isinstance(base, Pointer):
                idx = self._scalar(self.rvalue(node.children[1]))
                size = size_of(base.elem) or 4
                for n in base.inner:
                    size *= n
                return replace(base, offset=_add(base.offset, _mul(idx, size)), inner=base.inner[1:])
        if k == "deref":
            base = self.rvalue(node.children[-1])
            if isinstance(base, Pointer):
                return base
        raise Unsupported(node, "memory access through a non-pointer")

    # ---------- rvalues ----------
    def rvalue_or_ref(self, node) -> Value:
        if isinstance(node, Tree) and kind(node) == "name":
            return self.lookup(str(node.children[0]), node)
        return self.rvalue(node)

    def rvalue(self, node) -> Value:
        val = self._dispatch(node, "expr", "expression")
        if isinstance(val, SharedScalar):
            return self.load(val.ptr, self.span(node))
        if isinstance(val, LocalRef):
            shape = vector_shape(val.ty)
            if shape:
                return Vector(tuple(ir.Var(f"{val.name}.{i}") for i in range(shape[1])), val.ty)
            return Scalar(ir.Var(val.name), val.ty)
        return val

    def cond(self, node) -> ir.Expr:
        return self._scalar(self.rvalue(node))

    def _scalar(self, val: Value) -> ir.Expr:
        if isinstance(val, Scalar):
            return val.expr
        if isinstance(val, Vector):
            return ir.Call("vec", val.comps)
        if isinstance(val, LocalRef):
            return ir.Var(val.name)
        if isinstance(val, Pointer):
            return ir.Call("ptr:" + val.buffer, (val.offset,))
        raise Unsupported(None, f"{_describe(val)} used as a number")   # located by rvalue/stmt

    def _value_expr(self, val: Value) -> ir.Expr:
        return self._scalar(val)

    def _components(self, val: Value, n: int) -> tuple[ir.Expr, ...]:
        if isinstance(val, Vector):
            comps = val.comps
            return comps if len(comps) == n else tuple(ir.Call(f"lane{i}", (ir.Call("vec", comps),)) for i in range(n))
        e = self._scalar(val)
        return tuple(ir.Call(f"lane{i}", (e,)) for i in range(n))

    def expr_name(self, node):
        return self.lookup(str(node.children[0]), node)

    def expr_scoped_name(self, node):
        return Scalar(ir.Call("::".join(str(c) for c in node.children), ()), "int")

    def expr_int_lit(self, node):
        text = str(node.children[0]).rstrip("uUlL")
        # C, not Python: a leading 0 means octal (`0777`), and a literal must fit in 64 bits.
        digits, base = (text[2:], 16) if text[:2] in ("0x", "0X") else (text, 8) if text[:1] == "0" else (text, 10)
        try:
            value = int(digits.lstrip("0") or "0", base) if len(digits) <= 70 else None
        except ValueError:
            raise Unsupported(node, f"invalid integer literal '{_clip(text)}'") from None
        if value is None or value >= 2 ** 64:
            raise Unsupported(node, f"integer literal '{_clip(text)}' does not fit in 64 bits")
        return Scalar(ir.Const(value), "int")

    def expr_float_lit(self, node):
        return Scalar(ir.Call("float:" + str(node.children[0]), ()), "float")

    def expr_true_lit(self, node):
        return Scalar(ir.Const(1), "bool")

    def expr_false_lit(self, node):
        return Scalar(ir.Const(0), "bool")

    def expr_string_lit(self, node):
        return Scalar(ir.Call("str:" + str(node.children[0]), ()), "int")

    def expr_binop(self, node):
        a, op, b = node.children
        return self._binop(str(op), self.rvalue(a), self.rvalue(b), node)

    def _binop(self, op: str, a: Value, b: Value, node) -> Value:
        if isinstance(a, Pointer) and op in "+-" and isinstance(b, Scalar):
            size = size_of(a.elem) or 1
            step = _mul(b.expr, size)
            return replace(a, offset=_add(a.offset, step) if op == "+" else ir.BinOp("-", a.offset, step))
        if isinstance(b, Pointer) and op == "+" and isinstance(a, Scalar):
            return self._binop("+", b, a, node)
        if isinstance(a, Vector) or isinstance(b, Vector):
            n = len(a.comps) if isinstance(a, Vector) else len(b.comps)
            ca = self._components(a, n) if isinstance(a, Vector) else (self._scalar(a),) * n
            cb = self._components(b, n) if isinstance(b, Vector) else (self._scalar(b),) * n
            ty = a.ty if isinstance(a, Vector) else b.ty  # type: ignore[union-attr]
            return Vector(tuple(self._arith(op, x, y, ty) for x, y in zip(ca, cb)), ty)
        ty = self._result_type(a, b)
        return Scalar(self._arith(op, self._scalar(a), self._scalar(b), ty), ty)

    @staticmethod
    def _result_type(a: Value, b: Value) -> str:
        ta = a.ty if isinstance(a, Scalar) else "int"
        tb = b.ty if isinstance(b, Scalar) else "int"
        for t in ("double", "float", "half", "bfloat"):
            if t in (ta, tb) or f"__{t}" in (ta, tb):
                return t
        return ta if ta == tb else "int"

    @staticmethod
    def _is_float(ty: str) -> bool:
        shape = vector_shape(ty)
        base = shape[0] if shape else ty
        return base in ("float", "double", "half", "__half", "bfloat", "__nv_bfloat16", "nv_bfloat16")

    def _arith(self, op: str, a: ir.Expr, b: ir.Expr, ty: str) -> ir.Expr:
        if self._is_float(ty) and op not in ("==", "!=", "<", "<=", ">", ">=", "&&", "||"):
            return ir.Call("f" + op, (a, b))
        if self._is_float(ty):
            return ir.Call("fcmp" + op, (a, b))
        if isinstance(a, ir.Const) and isinstance(b, ir.Const) and op in ("+", "-", "*"):
            return ir.Const({"+": a.value + b.value, "-": a.value - b.value, "*": a.value * b.value}[op])
        return ir.BinOp(op, a, b)

    def expr_lor(self, node):
        return Scalar(ir.BinOp("||", self.cond(node.children[0]), self.cond(node.children[1])), "bool")

    def expr_land(self, node):
        return Scalar(ir.BinOp("&&", self.cond(node.children[0]), self.cond(node.children[1])), "bool")

    def expr_bor(self, node):
        return self._binop("|", self.rvalue(node.children[0]), self.rvalue(node.children[1]), node)

    def expr_bxor(self, node):
        return self._binop("^", self.rvalue(node.children[0]), self.rvalue(node.children[1]), node)

    def expr_band(self, node):
        return self._binop("&", self.rvalue(node.children[0]), self.rvalue(node.children[-1]), node)

    def expr_ternary(self, node):
        c = self.cond(node.children[0])
        a, b = self.rvalue(node.children[1]), self.rvalue(node.children[2])
        if isinstance(a, Vector) or isinstance(b, Vector):
            n = len(a.comps) if isinstance(a, Vector) else len(b.comps)  # type: ignore[union-attr]
            ca, cb = self._components(a, n), self._components(b, n)
            return Vector(tuple(ir.Select(c, x, y) for x, y in zip(ca, cb)), a.ty if isinstance(a, Vector) else b.ty)  # type: ignore[union-attr]
        if isinstance(a, Pointer) and isinstance(b, Pointer) and a.buffer == b.buffer:
            return replace(a, offset=ir.Select(c, a.offset, b.offset))
        return Scalar(ir.Select(c, self._scalar(a), self._scalar(b)), self._result_type(a, b))

    def expr_unary(self, node):
        op, a = str(node.children[0]), self.rvalue(node.children[1])
        if isinstance(a, Scalar) and self._is_float(a.ty):
            return Scalar(ir.Call("f" + op, (a.expr,)), a.ty)
        return Scalar(ir.UnOp(op, self._scalar(a)), "int" if op == "!" else getattr(a, "ty", "int"))

    def expr_neg(self, node):
        a = self.rvalue(node.children[0])
        if isinstance(a, Vector):
            return Vector(tuple(ir.Call("f-", (c,)) for c in a.comps), a.ty)
        if isinstance(a, Scalar) and isinstance(a.expr, ir.Const):
            return Scalar(ir.Const(-a.expr.value), a.ty)
        if isinstance(a, Scalar) and self._is_float(a.ty):
            return Scalar(ir.Call("f-", (a.expr,)), a.ty)
        return Scalar(ir.UnOp("-", self._scalar(a)), getattr(a, "ty", "int"))

    def expr_pos(self, node):
        return self.rvalue(node.children[0])

    def expr_cast(self, node):
        ty = self._type_of(node.children[0])
        val = self.rvalue(node.children[1])
        if ty.ptr:
            if isinstance(val, Pointer):
                return replace(val, elem=ty.base)
            raise Unsupported(node, "cast of an integer to a pointer")
        return self._convert(val, ty.base)

    def _convert(self, val: Value, ty: str) -> Value:
        shape = vector_shape(ty)
        if shape:
            return Vector(self._components(val, shape[1]), ty)
        if isinstance(val, Vector):
            return Scalar(ir.Call("cvt:" + ty, (ir.Call("vec", val.comps),)), ty)
        e = self._scalar(val)
        src = val.ty if isinstance(val, Scalar) else "int"
        if self._is_float(ty) != self._is_float(src) or (self._is_float(ty) and ty != src):
            return Scalar(ir.Call("cvt:" + ty, (e,)), ty)
        return Scalar(e, ty)

    def expr_construct(self, node):
        ty = self._type_of(node)
        args = node.children[-1]
        vals = [self.rvalue(a) for a in args.children] if args is not None else []
        shape = vector_shape(ty.base)
        if shape:
            comps: list[ir.Expr] = []
            for v in vals:
                comps.extend(v.comps if isinstance(v, Vector) else (self._scalar(v),))
            if len(comps) == 1:
                comps = comps * shape[1]
            if len(comps) != shape[1]:
                raise Unsupported(node, f"{ty.base} built from {len(comps)} values")
            return Vector(tuple(comps), ty.base)
        if len(vals) == 1:
            return self._convert(vals[0], ty.base)
        return Scalar(ir.Call("ctor:" + ty.base, tuple(self._scalar(v) for v in vals)), ty.base)

    def expr_sizeof_type(self, node):
        ty = self._type_of(node.children[0])
        return Scalar(ir.Const(8 if ty.ptr else (size_of(ty.base) or 4)), "int")

    def expr_addr_of(self, node):
        target = node.children[-1]
        if isinstance(target, Tree) and kind(target) == "name":
            ref = self.lookup(str(target.children[0]), target)
            if isinstance(ref, SharedScalar):
                return ref.ptr
        if isinstance(target, Tree) and kind(target) in ("index", "deref"):
            return self.lvalue_pointer(target)
        raise Unsupported(node, "address of a non-memory value")

    def expr_deref(self, node):
        ptr = self.rvalue(node.children[-1])
        if not isinstance(ptr, Pointer):
            raise Unsupported(node, "dereference of a non-pointer")
        return self.load(ptr, self.span(node))

    def _root_is_param_struct(self, node) -> bool:
        while isinstance(node, Tree) and kind(node) in ("member", "index"):
            node = node.children[0]
        return (isinstance(node, Tree) and kind(node) == "name"
                and isinstance(self.lookup(str(node.children[0]), node), ParamStruct))

    def expr_index(self, node):
        if self._root_is_param_struct(node):
            return self._param_path(node)
        base = self.rvalue_or_ref(node.children[0])
        if isinstance(base, LocalRef) and vector_shape(base.ty):
            idx = self._scalar(self.rvalue(node.children[1]))
            if isinstance(idx, ir.Const):
                return Scalar(ir.Var(f"{base.name}.{idx.value}"), vector_shape(base.ty)[0])  # type: ignore[index]
            raise Unsupported(node, "vector lane selected by a variable")
        if isinstance(base, Vector):
            idx = self._scalar(self.rvalue(node.children[1]))
            if isinstance(idx, ir.Const) and idx.value < len(base.comps):
                return Scalar(base.comps[idx.value], (vector_shape(base.ty) or ("int", 0))[0])
            raise Unsupported(node, "vector lane selected by a variable")
        if isinstance(base, ParamStruct):
            return self._param_path(node)
        ptr = self.lvalue_pointer(node)
        if isinstance(base, Pointer) and base.inner:
            return ptr  # a row of a multi-dimensional array
        return self.load(ptr, self.span(node))

    def _param_path(self, node) -> Scalar:
        """arg.H[0] on a constant argument struct: a uniform scalar parameter named by its path."""
        def text(n) -> str:   # a loop, not recursion: `arg.a.a.a...` may be any length
            parts = []
            while kind(n) != "name":
                k = kind(n)
                if k == "member":
                    parts.append(f".{n.children[1]}")
                elif k == "index":
                    idx = self._scalar(self.rvalue(n.children[1]))
                    if not isinstance(idx, ir.Const):
                        raise Unsupported(n, "argument struct indexed by a variable")
                    parts.append(f"[{idx.value}]")
                else:
                    raise Unsupported(n, "argument struct expression")
                n = n.children[0]
            return str(n.children[0]) + "".join(reversed(parts))
        name = text(node)
        # TVM's Metal argument struct holds each scalar as `arg.NAME[0]`: call it NAME.
        root, _, rest = name.partition(".")
        if rest.endswith("[0]") and "." not in rest and rest.count("[") == 1:
            name = rest[:-3]
        elif rest and "." not in rest and "[" not in rest:
            name = rest
        if name not in self.kernel.params:
            self.kernel.params.append(name)
        return Scalar(ir.Param(name), "int")

    def load(self, ptr: Pointer, span) -> Value:
        acc = self.make_access(ptr, False, span)
        read = ir.Read(acc)
        shape = vector_shape(ptr.elem)
        if shape:
            return Vector(tuple(ir.Call(f"lane{i}", (read,)) for i in range(shape[1])), ptr.elem)
        return Scalar(read, ptr.elem)

    def expr_member(self, node):
        if self._root_is_param_struct(node):
            return self._param_path(node)
        base = self.rvalue_or_ref(node.children[0])
        field = str(node.children[1])
        if isinstance(base, BuiltinVec):
            if field not in ("x", "y", "z"):
                raise Unsupported(node, f"member '.{field}' of a builtin index vector (it has .x, .y, .z)")
            return Scalar(ir.Builtin(f"{base.prefix}.{field}"), "uint")
        if isinstance(base, ParamStruct):
            return self._param_path(node)
        comp = COMPONENTS.get(field)
        if isinstance(base, LocalRef) and comp is not None:
            return Scalar(ir.Var(f"{base.name}.{comp}"), (vector_shape(base.ty) or ("int", 0))[0])
        if isinstance(base, Vector) and comp is not None and comp < len(base.comps):
            return Scalar(base.comps[comp], (vector_shape(base.ty) or ("int", 0))[0])
        raise Unsupported(node, f"member '.{field}'")

    def _member_pointer(self, base, node) -> Pointer | None:
        return None

    def expr_arrow(self, node):
        raise Unsupported(node, "'->' member access")

    def expr_pre_incdec(self, node):
        raise Unsupported(node, "'++'/'--' inside an expression")

    expr_post_incdec = expr_pre_incdec

    def expr_assign(self, node):
        raise Unsupported(node, "assignment inside an expression")

    def expr_init_list(self, node):
        raise Unsupported(node, "initializer list")

    def _callee_name(self, node: Tree) -> str | None:
        callee = node.children[0]
        k = kind(callee)
        if k == "name":
            return str(callee.children[0])
        if k == "scoped_name":
            return "::".join(str(c) for c in callee.children)
        return None

    def expr_call(self, node):
        fn = self._callee_name(node)
        if fn is None:
            raise Unsupported(node, "call through an expression")
        args = list(node.children[1].children) if node.children[1] is not None else []
        special = self.call_value(fn, args, node)
        if special is not None:
            return special
        if fn.startswith("make_") and vector_shape(fn[5:]):
            ty = fn[5:]
            comps = tuple(self._scalar(self.rvalue(a)) for a in args)
            if len(comps) != vector_shape(ty)[1]:  # type: ignore[index]
                raise Unsupported(node, f"{fn} with {len(comps)} values")
            return Vector(comps, ty)
        if self.barrier(fn, node) is not None:
            raise Unsupported(node, f"barrier '{fn}' inside an expression")
        if fn in self.functions and self._should_inline(fn):
            return self._inline(fn, args, node)
        vals = [self.rvalue(a) for a in args]
        ty = "float" if any(isinstance(v, Scalar) and self._is_float(v.ty) for v in vals) else "int"
        if any(isinstance(v, Pointer) for v in vals):
            raise Unsupported(node, f"call of '{fn}' with a pointer argument")
        return Scalar(ir.Call(fn, tuple(self._scalar(v) for v in vals)), ty)

    def call_value(self, fn: str, args: list, node: Tree) -> Value | None:
        """Dialect builtins that produce values (shuffles, atomics); None for ordinary calls."""
        return None

    def opaque(self, why: str) -> ir.Opaque:
        return ir.Opaque(why, next(self.opaque_ids))

    # ---------- device functions ----------
    def _should_inline(self, fn: str) -> bool:
        """Inline device functions that touch memory or synchronise; others stay pure calls."""
        tree = self.functions[fn]
        head = tree.children[0]
        params = next(c for c in head.children if isinstance(c, Tree) and kind(c) == "params")
        if any(p is not None and (self._type_of(p).ptr or self._type_of(p).ref) for p in params.children):
            return True
        body_text = " ".join(str(t) for t in tokens_of(tree.children[1]))
        return any(b in body_text.split() for b in self.barrier_names)

    barrier_names: tuple[str, ...] = ()

    def _inline(self, fn: str, args: list, node: Tree) -> Value:
        if self.inline_depth > 8:
            raise Unsupported(node, f"recursion through '{fn}'")
        tree = self.functions[fn]
        head, body = tree.children
        params = next(c for c in head.children if isinstance(c, Tree) and kind(c) == "params")
        plist = [p for p in params.children if p is not None]
        if len(plist) != len(args):
            raise Unsupported(node, f"call of '{fn}' with {len(args)} arguments")
        scope: dict[str, Value] = {}
        stmts: list[ir.Stmt] = []
        span = self.span(node)
        for p, a in zip(plist, args):
            ty = self._type_of(p)
            pname = next((str(c) for c in p.children if isinstance(c, Token) and c.type == "NAME"), None)
            val = self.rvalue(a) if not ty.ref else self.lvalue_pointer(a)
            if pname is None:   # an unnamed parameter: the argument is evaluated, never read
                continue
            if isinstance(val, Pointer):
                scope[pname] = replace(val, elem=ty.base) if ty.ptr else val
            else:
                ref = LocalRef(self.fresh_var(f"{fn}.{pname}"), ty.base)
                stmts.extend(self._assign_local(ref, val, span))
                scope[pname] = ref
        ret_ty = self._type_of(head).base
        saved = self.scopes, getattr(self, "return_var", None)
        self.return_var = self.fresh_var(f"{fn}.ret")
        self.scopes = [self.scopes[0], scope]
        self.inline_depth += 1
        # Effects of the arguments come first, then the parameter bindings, then the body.
        outer, self.pending = self.pending + stmts, []
        try:
            body_ir = self._block(body)
        finally:
            self.inline_depth -= 1
            ret_var = self.return_var
            self.scopes, self.return_var = saved
            self.pending = outer
        if any(isinstance(s, ir.Loop) and _has_return(s.body) for s in ir.walk_stmts(body_ir, into_loops=False)):
            raise Unsupported(node, f"'return' inside a loop of inlined function '{fn}'")
        # A `return` inside an inlined body ends the call, not the kernel: wrap it in a one-trip loop.
        if any(isinstance(s, ir.Return) for s in ir.walk_stmts(body_ir, into_loops=False)):
            body_ir = _returns_to_breaks(body_ir)
            body_ir.append(ir.Break(span))
            self.pending.append(ir.Loop([], None, [], body_ir, span, next(self.loop_ids)))
        else:
            self.pending.extend(body_ir)
        if ret_ty == "void":
            return Scalar(ir.Const(0), "int")
        return Scalar(ir.Var(ret_var), ret_ty)


def _clip(text: str, limit: int = 24) -> str:
    return text if len(text) <= limit else text[:limit] + "..."


def _describe(val) -> str:
    """A value that is not a number, as the message about its use names it."""
    if isinstance(val, FuncRef):
        return f"'{val.name}', which is not a declared variable,"
    if isinstance(val, BuiltinVec):
        return "a builtin index vector (without .x, .y or .z)"
    if isinstance(val, ParamStruct):
        return f"the argument struct '{val.name}'"
    return type(val).__name__.lower()


def _has_return(stmts) -> bool:
    for s in stmts:
        if isinstance(s, ir.Return):
            return True
        if isinstance(s, ir.If) and (_has_return(s.then) or _has_return(s.orelse)):
            return True
        if isinstance(s, ir.Loop) and _has_return(s.body):
            return True
    return False


def _returns_to_breaks(stmts):
    out = []
    for s in stmts:
        if isinstance(s, ir.Return):
            out.append(ir.Break(s.span))
        elif isinstance(s, ir.If):
            out.append(ir.If(s.cond, _returns_to_breaks(s.then), _returns_to_breaks(s.orelse), s.span))
        else:
            out.append(s)
    return out
