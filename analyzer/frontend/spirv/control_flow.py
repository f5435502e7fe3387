"""Structured control flow rebuilt from a function's blocks: a region of blocks up to its merge
block becomes statements, an `OpLoopMerge` header a `Loop` (with its continue construct), an
`OpBranchConditional` an `If`, an `OpPhi` assignments on each incoming edge; a called function is
inlined. Separate because it is the only part of the lowering that walks the block graph."""

from __future__ import annotations

import itertools

from lark import Tree

from analyzer import ir
from analyzer.frontend.lower import MAX_NESTING, Unsupported, _has_return
from analyzer.frontend.spirv.module import Block, Ins, _at
from analyzer.frontend.spirv.values import Vec


class ControlFlowMixin:
    """KernelLowering's functions and blocks: `fn` is the function being lowered, `path` the
    blocks of the active regions."""

    def function(self, fid: str, args: list, top: bool = False) -> list[ir.Stmt]:
        fn = self.m.functions.get(fid)
        if fn is None:
            raise Unsupported(self.entry.node, f"entry point {fid} has no function body")
        if self.depth > 16:
            raise Unsupported(self.entry.node, f"recursion through {fn.name}")
        for p, a in zip(fn.params, args):
            self.values[p] = a
        self.fn = fn
        saved = getattr(self, "ret_var", None)
        self.ret_var = None if top else self.fresh(f"{fn.name}.ret")
        out: list[ir.Stmt] = []
        entry = fn.blocks.get(fn.entry)
        if entry is None:
            raise Unsupported(self.entry.node, f"function {fn.name} has no blocks")
        # Variables sit at the top of the entry block.
        for ins in entry.ins:
            if ins.op == "OpVariable":
                with _at(ins.node):
                    pointee = self.m.types[ins.args[0]].elem
                    out.extend(self._local_variable(ins.result, pointee, ins))
        body = self.region(fn.entry, None, None)
        out.extend(body)
        ret = self.ret_var
        self.ret_var = saved
        if top:
            return out
        while out and isinstance(out[-1], ir.Return):
            out.pop()
        if _has_return(out):
            span = out[0].span if out else self.span(self.entry)
            # The body runs inside a one-trip loop, a `return` as its `break`. One inside a loop of
            # the body sets a flag and breaks out; after that loop, the flag breaks out again.
            flag = self.fresh(f"{fn.name}.returned")
            out = _returns_out(out, flag, False) + [ir.Break(span)]
            out = [ir.Assign(flag, ir.Const(0), span), ir.Loop([], None, [], out, span, next(self.loop_ids))]
        self.last_return = ret
        return out

    def region(self, label: str | None, stop: str | None, loop: tuple | None) -> list[ir.Stmt]:
        """Statements from block `label` until `stop` (a merge block). `loop` is the innermost
        loop's (merge, continue) pair: branches there are `break` and `continue`."""
        out: list[ir.Stmt] = []
        fn = self.fn
        self.nesting = getattr(self, "nesting", 0) + 1
        entered: list[str] = []
        try:
            if self.nesting > MAX_NESTING:
                raise Unsupported(self.entry.node if label not in fn.blocks else _first_node(fn.blocks[label], self.entry),
                                  f"control flow nested too deeply (more than {MAX_NESTING} constructs)")
            return self._region(label, stop, loop, out, entered)
        finally:
            self.nesting -= 1
            for x in entered:
                self.path.discard(x)

    def _region(self, label, stop, loop, out: list, entered: list) -> list[ir.Stmt]:
        fn = self.fn
        if not hasattr(self, "path"):
            self.path: set[str] = set()   # blocks being lowered by the active regions: a cycle check
        while label is not None and label != stop:
            if loop is not None and label == loop[0]:
                out.append(ir.Break(_span_of(out[-1]) if out else self._label_span(label)))
                return out
            if loop is not None and label == loop[1]:
                out.append(ir.Continue(_span_of(out[-1]) if out else self._label_span(label)))
                return out
            block = fn.blocks.get(label)
            if block is None:
                raise Unsupported(self.entry.node, f"branch to unknown block {label}")
            if label in self.path:
                raise Unsupported(_first_node(block, self.entry),
                                  f"branch back to block {label} outside a loop's back edge (unstructured control flow)")
            self.path.add(label)
            entered.append(label)
            if block.merge is not None and block.merge.op == "OpLoopMerge":
                out.append(self.loop(block, loop))
                label = block.merge.args[0]
                continue
            out.extend(self.instructions(block))
            label = self.terminator(block, out, stop, loop)
        return out

    def _label_span(self, label: str) -> ir.Span:
        block = self.fn.blocks.get(label)
        first = (block.ins or block.phis or [block.term])[0] if block else None
        return self.span(first) if first is not None else ir.Span(self.filename, 0, 0)

    def terminator(self, block: Block, out: list, stop, loop) -> str | None:
        term = block.term
        if term is None:
            raise Unsupported(self.entry.node, f"block {block.label} has no terminator")
        with _at(term.node):
            return self._terminator(block, term, out, stop, loop)

    def _terminator(self, block: Block, term: Ins, out: list, stop, loop) -> str | None:
        span = self.span(term)
        op, a = term.op, term.args
        if op == "OpBranch":
            out.extend(self.edge(block.label, a[0]))
            return a[0]
        if op == "OpBranchConditional":
            cond = self.scalar(a[0], term)
            merge = block.merge.args[0] if block.merge is not None and block.merge.op == "OpSelectionMerge" else None
            if a[1] == a[2]:
                out.extend(self.edge(block.label, a[1]))
                return a[1]
            then = self.arm(block.label, a[1], merge or stop, loop)
            orelse = self.arm(block.label, a[2], merge or stop, loop)
            if merge is None:
                # Without a merge, the arms leave the construct or run to the region's end: an arm
                # that leaves becomes `if (...) break;` and the other one follows it.
                if _leaves(orelse):
                    out.append(ir.If(ir.UnOp("!", cond), orelse, [], span))
                    out.extend(then)
                    return stop
                if _leaves(then):
                    out.append(ir.If(cond, then, [], span))
                    out.extend(orelse)
                    return stop
                out.append(ir.If(cond, then, orelse, span))
                return stop
            out.append(ir.If(cond, then, orelse, span))
            return merge
        if op in ("OpReturn", "OpReturnValue"):
            if op == "OpReturnValue":
                v = self.value(a[0], term)
                if isinstance(v, Vec):   # a vector or composite: one variable per scalar, in order
                    out.extend(ir.Assign(f"{self.ret_var}.{i}", self._as_expr(x), span)
                               for i, x in enumerate(self._flat(v)))
                else:
                    out.append(ir.Assign(self.ret_var, self.scalar(a[0], term), span))
            out.append(ir.Return(span))
            return None
        if op in ("OpKill", "OpTerminateInvocation", "OpUnreachable"):
            out.append(ir.Return(span))
            return None
        raise Unsupported(term.node, op)

    def arm(self, src: str, target: str, stop, loop) -> list[ir.Stmt]:
        copies = self.edge(src, target)
        if target == stop:
            return copies
        return copies + self.region(target, stop, loop)

    def edge(self, src: str, dst: str) -> list[ir.Stmt]:
        """Assignments for the phis of `dst` on the edge from `src` (parallel-copy semantics)."""
        block = self.fn.blocks.get(dst)
        if block is None or not block.phis:
            return []
        moves = []
        for phi in block.phis:
            var = self._phi_var(phi)
            pairs = phi.args[1:]
            if len(pairs) % 2:
                raise Unsupported(phi.node, "OpPhi with an odd number of value/block operands")
            incoming = next((pairs[i] for i in range(0, len(pairs), 2) if pairs[i + 1] == src), None)
            if incoming is None:
                raise Unsupported(phi.node, f"OpPhi without a value for predecessor {src}")
            moves.append((var, self.scalar(incoming, phi), self.span(phi)))
        targets = {v for v, _, _ in moves}
        if len(moves) > 1 and any(ir.reads_names(e, targets) for _, e, _ in moves):
            temps = [(self.fresh(f"{v}.in"), e, s) for v, e, s in moves]
            return ([ir.Assign(t, e, s) for t, e, s in temps]
                    + [ir.Assign(v, ir.Var(t), s) for (v, _, s), (t, _, _) in zip(moves, temps)])
        return [ir.Assign(v, e, s) for v, e, s in moves]

    def _phi_var(self, phi: Ins) -> str:
        v = self.values.get(phi.result)
        if isinstance(v, ir.Var):
            return v.name
        name = self.fresh(self.m.names.get(phi.result, "") or phi.result[1:])
        self.values[phi.result] = ir.Var(name)
        return name

    def loop(self, header: Block, outer: tuple | None) -> ir.Loop:
        merge_ins = header.merge
        merge, cont = merge_ins.args[0], merge_ins.args[1]
        for phi in header.phis:
            self._phi_var(phi)
        span = self.span(merge_ins)
        inner = (merge, cont)
        body: list[ir.Stmt] = self.instructions(header)
        nxt = self.terminator(header, body, cont, inner)
        if nxt is not None and nxt != cont:
            body.extend(self.region(nxt, cont, inner))
        update: list[ir.Stmt] = []
        if cont != header.label:
            update = self.continue_construct(cont, header.label, inner, merge)
        if update and isinstance(update[-1], ir.If) and update[-1].orelse and isinstance(update[-1].orelse[-1], ir.Break):
            # A do-while: the continue block decides whether to loop. It runs after the body's
            # every iteration, so it joins the body when no `continue` skips to it from inside.
            if _continues(body):
                raise Unsupported(merge_ins.node, "a do-while loop whose body continues to its condition")
            return ir.Loop([], None, [], body + update, span, next(self.loop_ids))
        cond = None
        # `if (!c) break;` first in the body is the loop's own condition (a for/while loop).
        if body and isinstance(body[0], ir.If) and body[0].then and isinstance(body[0].then[0], ir.Break) \
                and len(body[0].then) == 1 and not body[0].orelse:
            cond = _negate(body[0].cond)
            body = body[1:]
        return ir.Loop([], cond, update, body, span, next(self.loop_ids))

    def continue_construct(self, cont: str, header: str, loop: tuple, merge: str) -> list[ir.Stmt]:
        """The continue construct's statements, to the back edge; a do-while's (its last block
        branches back or out) ends in `if (c) {copies back} else {copies out; break}`."""
        out: list[ir.Stmt] = []
        label = cont
        seen: set[str] = set()
        while label != header:
            block = self.fn.blocks.get(label)
            if block is None:
                raise Unsupported(self.entry.node, f"branch to unknown block {label}")
            if label in seen:
                raise Unsupported(_first_node(block, self.entry), f"continue construct of {header} loops without it")
            seen.add(label)
            if block.merge is not None:
                raise Unsupported(block.merge.node, "structured control flow inside a loop's continue block")
            out.extend(self.instructions(block))
            term = block.term
            if term is None:
                raise Unsupported(self.entry.node, f"block {block.label} has no terminator")
            if term.op == "OpBranchConditional" and {term.args[1], term.args[2]} == {header, merge}:
                span = self.span(term)
                c = self.scalar(term.args[0], term)
                back = self.edge(label, header)
                leave = self.edge(label, merge) + [ir.Break(span)]
                out.append(ir.If(c if term.args[1] == header else _negate(c), back, leave, span))
                return out
            if term.op != "OpBranch":
                raise Unsupported(term.node, "a loop whose continue block exits the loop other than to its merge")
            out.extend(self.edge(label, term.args[0]))
            label = term.args[0]
        return out

    def call(self, ins: Ins) -> list[ir.Stmt]:
        fid = ins.args[1]
        args = [self.value(x, ins) for x in ins.args[2:]]
        saved_fn = self.fn
        self.depth += 1
        try:
            stmts = self.function(fid, args)
        finally:
            self.depth -= 1
            self.fn = saved_fn
        if ins.result is not None and self.m.types[ins.args[0]].kind != "void":
            t = self.m.types[ins.args[0]]
            if t.kind in ("vector", "struct", "array", "matrix"):
                names = (ir.Var(f"{self.last_return}.{i}") for i in itertools.count())
                self.bind(ins, self._shaped(ins.args[0], names, ins))
            else:
                self.bind(ins, ir.Var(self.last_return))
        return stmts

    def _shaped(self, tid: str, leaves, ins: Ins):
        """A composite value of type `tid` whose scalars are the next of `leaves`, in order."""
        t = self.m.types[tid]
        if t.kind == "vector":
            return Vec(tuple(next(leaves) for _ in range(t.count)))
        if t.kind == "struct":
            return Vec(tuple(self._shaped(m, leaves, ins) for m in t.members))
        if t.kind in ("array", "matrix"):
            if t.count > 256:
                raise Unsupported(ins.node, "a called function returning an array of more than 256 elements")
            return Vec(tuple(self._shaped(t.elem, leaves, ins) for _ in range(t.count)))
        if t.kind in ("int", "float", "bool"):
            return next(leaves)
        raise Unsupported(ins.node, f"a called function returning a {t.kind}")


def _span_of(stmt) -> ir.Span:
    """A statement's span (a MemOp keeps its span on its access)."""
    return stmt.access.span if isinstance(stmt, ir.MemOp) else stmt.span


def _first_node(block: Block, fallback: Ins) -> Tree:
    first = (block.phis or block.ins or [block.merge or block.term or fallback])[0]
    return first.node


def _negate(c: ir.Expr) -> ir.Expr:
    return c.a if isinstance(c, ir.UnOp) and c.op == "!" else ir.UnOp("!", c)


def _continues(stmts: list) -> bool:
    """Does a `continue` of this loop (not of a loop inside it) occur in `stmts`?"""
    for s in stmts:
        if isinstance(s, ir.Continue):
            return True
        if isinstance(s, ir.If) and (_continues(s.then) or _continues(s.orelse)):
            return True
    return False


def _leaves(stmts: list) -> bool:
    return bool(stmts) and isinstance(stmts[-1], (ir.Break, ir.Continue, ir.Return))


def _returns_out(stmts: list, flag: str, in_loop: bool) -> list:
    """A called function's statements with each `return` a `break` out of the loop the inlined body
    sits in: inside a loop of the body, `flag = 1; break`, and `if (flag) break;` after that loop."""
    out: list = []
    for s in stmts:
        if isinstance(s, ir.Return):
            out.extend([ir.Assign(flag, ir.Const(1), s.span), ir.Break(s.span)] if in_loop else [ir.Break(s.span)])
        elif isinstance(s, ir.If):
            out.append(ir.If(s.cond, _returns_out(s.then, flag, in_loop), _returns_out(s.orelse, flag, in_loop),
                             s.span, s.assumed))
        elif isinstance(s, ir.Loop) and _has_return(s.body):
            out.append(ir.Loop(s.init, s.cond, s.update, _returns_out(s.body, flag, True), s.span, s.id))
            out.append(ir.If(ir.BinOp("!=", ir.Var(flag), ir.Const(0)), [ir.Break(s.span)], [], s.span))
        else:
            out.append(s)
    return out
