"""Lower a C-family parse tree (CUDA, Metal) into the kernel IR.

The core class translates C syntax; each dialect subclass names its kernels, builtins, barriers,
address spaces and atomics. Values are tracked with just enough typing to turn pointer arithmetic,
casts and vector accesses into byte-addressed accesses of a named buffer.

CLowering is composed of one mixin per concern, which share the per-kernel state set up here:
declarations (c_decls), statements (c_stmts), assignments and memory accesses (c_access),
expressions (c_exprs), and builtins and calls (c_calls); the values they pass around are in
c_values and the parse-tree helpers in c_tree. The names other modules import from here stay here.
"""

from __future__ import annotations

import itertools

from lark import Token, Tree

from analyzer import ir
from analyzer.frontend.c_access import AccessLowering
from analyzer.frontend.c_calls import CallLowering, _has_return, _returns_to_breaks
from analyzer.frontend.c_decls import DeclLowering
from analyzer.frontend.c_exprs import ExprLowering
from analyzer.frontend.c_pointer_moves import PointerMoves
from analyzer.frontend.c_stmts import StmtLowering, leftover_goto
from analyzer.frontend.c_tree import Unsupported, kind, position, tokens_of
from analyzer.frontend.c_values import BuiltinVec, Pointer, Scalar, Value, Vector, _add, _mul
from analyzer.frontend.preprocess import Preprocessed
from analyzer.frontend.types import SCALAR_SIZES, vector_shape

__all__ = ["CLowering", "MAX_NESTING", "Unsupported", "position", "tokens_of", "BuiltinVec", "Pointer", "Scalar",
           "Value", "Vector", "_add", "_mul", "_has_return", "_returns_to_breaks"]


# Statements and expressions nested deeper than this are refused where they pass the limit: the
# lowering (and the analysis of what it produces) recurses once per level, and Python's stack would
# not hold a few thousand. Code people and TVM write nests a few dozen levels.
MAX_NESTING = 200


class CLowering(DeclLowering, StmtLowering, AccessLowering, ExprLowering, CallLowering, PointerMoves):
    """Dialect-independent lowering; subclasses fill in the dialect's vocabulary."""

    lang = "c"
    kernel_qualifiers: frozenset[str] = frozenset()
    shared_qualifiers: frozenset[str] = frozenset()
    warp_size = 32

    def __init__(self, tree: Tree, text: str, filename: str, pre: Preprocessed | None = None):
        self.tree = tree
        self.filename = filename
        self.lines = text.splitlines()   # the file as written (report snippets)
        # A preprocessed file: the parsed text, and where each of its lines came from.
        self.line_map = pre.line_map if pre is not None else None
        self.parsed_lines = pre.text.splitlines() if self.line_map else self.lines
        self.functions: dict[str, Tree] = {}
        self.scoped_functions: dict[tuple, dict[str, Tree]] = {}   # namespace -> its functions
        self.namespace_of: dict[int, tuple[str, ...]] = {}        # id(kernel) -> its namespace
        self.kernels: list[Tree] = []
        self.globals: list[Tree] = []            # file-scope variable declarations
        self.enums: list[Tree] = []
        self.template_params: dict[int, list[Tree]] = {}   # id(function_def) -> its tparams
        self.instances: dict[str, list[Tree]] = {}          # kernel template -> explicit instantiations' args
        self.aliases: dict[str, Tree] = {}       # typedef and using names -> the type they name
        self.struct_defs: dict[str, Tree] = {}   # struct/class name -> its definition (data members)
        self.access_ids = itertools.count(1)
        self.loop_ids = itertools.count(1)
        self.opaque_ids = itertools.count(1)
        self.nesting = 0
        self._collect(tree.children)
        self._all_functions = dict(self.functions)

    def _collect(self, items, ns: tuple[str, ...] = ()) -> None:
        """Kernels, functions, templates, types and globals of the file; `ns` is the namespace
        the items sit in (an explicit instantiation names the templates of its own namespace, and
        a function of a kernel's namespace hides one of the same name elsewhere)."""
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
                    self.namespace_of[id(item)] = ns
                else:
                    self.functions[name] = item
                    self.scoped_functions.setdefault(ns, {})[name] = item
            elif k == "template_item":
                inner = item.children[-1]
                if isinstance(inner, Tree) and kind(inner) == "function_def":
                    self.template_params[id(inner)] = [c for c in item.children[:-1]
                                                       if isinstance(c, Tree) and "tparam" in kind(c)]
                    self._collect([inner], ns)
            elif k == "template_instance":
                head = next(c for c in item.children if isinstance(c, Tree) and kind(c) == "fn_head")
                args = next((c for c in head.children if isinstance(c, Tree) and kind(c) == "template_args"), None)
                if args is not None:
                    self.instances.setdefault((ns, self._fn_name(head)), []).append(args)
            elif k == "namespace_item":
                self._collect(item.children[1:], ns + (str(item.children[0]),))
            elif k == "linkage_block":   # extern "C" { ... }
                self._collect(item.children[1:], ns)
            elif k == "struct_item":
                name = str(next(c for c in item.children if isinstance(c, Token)))
                if not _builtin_type(name):   # TVM's preamble defines its vector structs (half4)
                    self.struct_defs[name] = item
            elif k == "global_decl":
                self.globals.append(item)
            elif k == "enum_item":
                self.enums.append(item)
            elif k == "typedef_item":
                name = next(c for c in reversed(item.children) if isinstance(c, Token))
                if not _builtin_type(str(name)):
                    self.aliases[str(name)] = item
            elif k == "using_alias":
                # TVM's preamble spells its vector types as aliases of helper templates (`using
                # half4 = half4_bfloat164<__half, __half2>;`): the builtin meaning stays.
                if not _builtin_type(str(item.children[0])):
                    self.aliases[str(item.children[0])] = item.children[1]

    @staticmethod
    def _fn_name(head: Tree) -> str:
        return next(str(c) for c in head.children if isinstance(c, Token) and c.type in ("NAME", "TEMPLATE_NAME"))

    def _spec_words(self, node: Tree) -> set[str]:
        words = set()
        for c in node.children:
            if isinstance(c, Tree) and kind(c) == "spec":
                for q in c.children:
                    if isinstance(q, Tree) and kind(q) == "qualifier":
                        words.add(str(q.children[0]))
        return words

    def lower(self) -> list[ir.Kernel]:
        """Every kernel; a kernel template once per explicit instantiation in the file, or once
        with its integer parameters symbolic when the file instantiates it nowhere."""
        out = []
        for k in self.kernels:
            tparams = self.template_params.get(id(k))
            ns = self.namespace_of.get(id(k), ())
            instances = self.instances.get((ns, self._fn_name(k.children[0])), []) if tparams else []
            for args in instances or [None]:
                try:
                    out.append(self._lower_kernel(k, tparams or [], args))
                except Unsupported as exc:
                    # One kernel's unmodelled construct does not sink the file's others: this one
                    # is kept, empty, with the reason (reported `unknown`, never clean).
                    exc.node = exc.node if exc.node is not None else k
                    self.kernel.body = []
                    self.kernel.unsupported = (self.span(exc.node), exc.what)
                    out.append(self.kernel)
        return out

    def _bind_template(self, tparams: list[Tree], args: Tree | None, scope: dict, node) -> dict:
        """Bind template parameters: a type to the argument's type (4-byte `float` when not
        given), an integer to the argument's value, or (a kernel's, not given) to a symbolic
        kernel parameter. Returns the aliases to restore afterwards."""
        given = list(args.children) if args is not None else []
        saved = {}
        for i, tp in enumerate(tparams):
            name = str(next(c for c in reversed(tp.children) if isinstance(c, Token)))
            arg = given[i] if i < len(given) else None
            if kind(tp) == "value_tparam":
                if arg is not None:
                    scope[name] = self.rvalue(arg)
                elif scope is self.scopes[0]:
                    self.kernel.params.append(name)
                    scope[name] = Scalar(ir.Param(name), "int")
                continue
            saved[name] = self.aliases.get(name)
            self.aliases[name] = arg if arg is not None and kind(arg) == "type_name" else "float"
        return saved

    def _restore_aliases(self, saved: dict) -> None:
        for name, old in saved.items():
            if old is None:
                self.aliases.pop(name, None)
            else:
                self.aliases[name] = old

    def span(self, node) -> ir.Span:
        line, col = position(node)
        if self.line_map and 0 < line <= len(self.line_map):
            file, line = self.line_map[line - 1]
            return ir.Span(file, line, col)
        return ir.Span(self.filename, line, col)

    def _lower_kernel(self, fn: Tree, tparams: list[Tree] = (), targs: Tree | None = None) -> ir.Kernel:
        head, body = fn.children
        self._placed = head    # what a nesting error in blocks without a position names (`_dispatch`)
        ns = self.namespace_of.get(id(fn), ())
        name = "::".join(ns + (self._fn_name(head),))
        # The kernel's namespace's functions hide those of the same name in other namespaces.
        self.functions = {**self._all_functions, **self.scoped_functions.get(ns, {})}
        if targs is not None:
            name += "<" + ", ".join(" ".join(str(t) for t in tokens_of(a)) for a in targs.children) + ">"
        self.kernel = ir.Kernel(name=name, file=self.filename, lang=self.lang, body=[], buffers={},
                                params=[], warp_size=self.warp_size, source_lines=self.lines)
        self.scopes: list[dict[str, Value]] = [{}]
        self.var_counts: dict[str, int] = {}
        self.private: dict[str, ir.Buffer] = {}
        self.inline_depth = 0
        self.pending: list[ir.Stmt] = []
        self.after_goto = False   # a goto lowered: a later pointer move may be one it skips
        self._declare_globals()
        try:
            saved = self._bind_template(list(tparams), targs, self.scopes[0], fn)
        except Unsupported as exc:
            exc.node = exc.node if exc.node is not None else head
            raise
        try:
            params = next(c for c in head.children if isinstance(c, Tree) and kind(c) == "params")
            for p in params.children:
                if p is not None:
                    self._declare_param(p)
            self.kernel.max_threads_per_block = _block_size_bound(head)
            self.kernel.body = self._block(body)
            goto = leftover_goto(self.kernel.body)
            if goto is not None:
                raise Unsupported(goto.node, f"goto {goto.label} (to an earlier label, into a block or out of a loop)")
        finally:
            self._restore_aliases(saved)
        return self.kernel

    def _dispatch(self, node, prefix: str, what: str):
        """Lower `node` with its `prefix_KIND` method, one nesting level deeper; an Unsupported
        raised without a node (by `_scalar`) is placed at this, the innermost, node."""
        k = kind(node)
        method = getattr(self, f"{prefix}_{k}", None)
        if method is None:
            raise Unsupported(node, f"{what} '{k}'")
        if self.nesting >= MAX_NESTING:
            # (Blocks with nothing but blocks in them have no position: then the kernel's head.)
            placed = node if position(node)[0] else getattr(self, "_placed", node)
            raise Unsupported(placed, f"statements and expressions nested too deeply (more than {MAX_NESTING} levels)")
        self.nesting += 1
        try:
            return method(node)
        except Unsupported as exc:
            if exc.node is None:
                exc.node = node
            raise
        finally:
            self.nesting -= 1


def _builtin_type(name: str) -> bool:
    """A scalar or vector type the front end knows (half4, float4, int, ...)."""
    return vector_shape(name) is not None or name in SCALAR_SIZES


def _block_size_bound(head: Tree) -> int | None:
    """N of the kernel head's `__launch_bounds__(N[, ...])` (CUDA) when N is an integer literal
    (after the preprocessor); None without one."""
    stack = [head]
    while stack:
        n = stack.pop()
        if not isinstance(n, Tree):
            continue
        if kind(n) == "launch_bounds":
            toks = [str(t) for t in tokens_of(n.children[0])] if n.children else []
            try:
                value = int(toks[0].rstrip("uUlL"), 0) if len(toks) >= 1 and (len(toks) == 1 or toks[1] == ",") else 0
            except ValueError:
                return None
            return value if value > 0 else None
        stack.extend(n.children)
    return None
