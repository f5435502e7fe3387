"""Statements in the C-family lowering: blocks and scopes, conditionals, loops and jumps.

Separate from expressions: control flow maps onto the IR's If/Loop/Break/Continue/Return and grows
on its own (switch, do-while); the effects of an expression statement are lowered in c_access.
"""

from __future__ import annotations

from dataclasses import dataclass

from lark import Token, Tree

from analyzer import ir
from analyzer.frontend.c_tree import Unsupported, kind
from analyzer.frontend.c_values import Scalar, Vector


_KEYWORDS = frozenset({"IF", "WHILE", "FOR", "DO", "BREAK", "CONTINUE", "RETURN", "SWITCH", "CASE", "DEFAULT",
                       "GOTO"})


@dataclass(eq=False)
class Goto:
    """`goto L` while its block is lowered; gone once the block holding L resolves it (see
    _resolve_labels). The IR never holds one."""
    label: str
    node: Tree
    span: ir.Span


@dataclass(eq=False)
class Label:
    name: str
    span: ir.Span


class StmtLowering:
    """Blocks and control-flow statements; mixed into CLowering."""

    def _block(self, node: Tree) -> list[ir.Stmt]:
        """A block's statements; after `__assume(e)` (or assert, __builtin_assume, __requires)
        the rest of the block runs under `if (e)`: the fact guards everything after it. (One
        frame per nesting level, as `stmt` recurses through here.)"""
        self.scopes.append({})
        out: list[ir.Stmt] = []
        guarded, depth = out, 0
        for s in node.children:
            fact = self._assumption(s)
            if fact is None:
                guarded.extend(self.stmt(s))
                continue
            depth += 1
            if depth > 200:
                raise Unsupported(s, "more than 200 assumptions in one block")
            cond = self.cond(fact)
            guarded.extend(self._flush([]))
            inner: list[ir.Stmt] = []
            guarded.append(ir.If(cond, inner, [], self.span(s), assumed=True))
            guarded = inner
        self.scopes.pop()
        return _resolve_labels(out, self.fresh_var)

    # Statements that state a fact the rest of the block may rely on: a race that needs the fact
    # false is not reported (the fact is the user's, stated in the program).
    ASSUMPTIONS = frozenset({"assert", "__assume", "__builtin_assume", "__requires"})

    def _assumption(self, node):
        """The condition of an assumption statement, or None."""
        if not (isinstance(node, Tree) and kind(node) == "expr_stmt" and node.children[0] is not None):
            return None
        call = node.children[0]
        if kind(call) != "call" or self._callee_name(call) not in self.ASSUMPTIONS:
            return None
        args = call.children[1].children if call.children[1] is not None else []
        return args[0] if len(args) == 1 else None

    def _flush(self, stmts: list[ir.Stmt]) -> list[ir.Stmt]:
        pending, self.pending = self.pending, []
        return pending + stmts

    def stmt(self, node) -> list[ir.Stmt]:
        if node is None or not isinstance(node, Tree):
            return []
        return self._dispatch(node, "stmt", "statement")

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

    def stmt_attributed_stmt(self, node):   # a C++11 attribute says nothing about memory or order
        return self.stmt(node.children[-1])

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
        pre = self._flush([]) + self.hold_moved_pointers(parts[1:], self.span(node))
        self.scopes.append({})
        then = self.stmt(then_n)
        self.scopes.pop()
        self.scopes.append({})
        orelse = self.stmt(else_n) if else_n is not None else []
        self.scopes.pop()
        return pre + [ir.If(cond, then, orelse, self.span(node))]

    def stmt_while_stmt(self, node):
        cond_n, body_n = self.parts(node)
        held = self.hold_moved_pointers([node], self.span(node))
        cond = self.cond(cond_n)
        if self.pending:
            raise Unsupported(cond_n, "side effect in a loop condition")
        if isinstance(cond, ir.Const) and cond.value != 0:
            cond = None
        self.scopes.append({})
        body = self.stmt(body_n)
        self.scopes.pop()
        return held + [ir.Loop([], cond, [], body, self.span(node), next(self.loop_ids))]

    def stmt_goto_stmt(self, node):
        self.after_goto = True
        return self._flush([Goto(str(self.parts(node)[0]), node, self.span(node))])

    def stmt_labeled_stmt(self, node):
        name, inner = self.parts(node)
        return [Label(str(name), self.span(node))] + self.stmt(inner)

    def stmt_switch_stmt(self, node):
        """`switch` as a chain of guarded groups: a group (the statements after one or more labels)
        runs when an earlier group fell through into it or one of its labels matches (`default`:
        when none of the switch's labels does), and no `break` of the switch was taken. Linear in
        the statements: each runs under one guard, nothing is copied."""
        value_n, *items = self.parts(node)
        span = self.span(node)
        value = self.cond(value_n)
        sel, fell, broke = self.fresh_var("switch"), self.fresh_var("switch.fell"), self.fresh_var("switch.broke")
        out = self._flush([ir.Assign(sel, value, span), ir.Assign(fell, ir.Const(0), span),
                           ir.Assign(broke, ir.Const(0), span)]) + self.hold_moved_pointers(items, span)
        groups: list[tuple[list, list]] = []     # (labels: case expressions or None for default, statements)
        for it in items:
            if isinstance(it, Tree) and kind(it) in ("case_label", "default_label"):
                if not groups or groups[-1][1]:
                    groups.append(([], []))
                label = self.cond(self.parts(it)[0]) if kind(it) == "case_label" else None
                if self.pending:
                    raise Unsupported(it, "side effect in a case label")
                groups[-1][0].append(label)
            elif not groups:
                continue   # statements before the first label never run
            else:
                groups[-1][1].append(it)
        return out + switch_groups(self, groups, sel, fell, broke, span)

    def stmt_do_stmt(self, node):
        """`do body while (c);` as `for (;;) { body; if (!c) break; }`, where a `continue` of this
        loop also tests c first (it jumps to the test, not to the next iteration)."""
        body_n, cond_n = self.parts(node)
        held = self.hold_moved_pointers([node], self.span(node))
        self.scopes.append({})
        body = self.stmt(body_n)
        self.scopes.pop()
        cond = self.cond(cond_n)
        if self.pending:
            raise Unsupported(cond_n, "side effect in a loop condition")
        span = self.span(cond_n)
        exit_ = lambda: ir.If(ir.UnOp("!", cond), [ir.Break(span)], [], span)  # noqa: E731
        body = _continues_test(body, cond, span) + [exit_()]
        return held + [ir.Loop([], None, [], body, self.span(node), next(self.loop_ids))]

    def stmt_for_stmt(self, node):
        init_n, cond_n, upd_n, body_n = self.parts(node)
        self.scopes.append({})
        init = self.stmt(init_n)
        init += self.hold_moved_pointers([cond_n, upd_n, body_n], self.span(node))
        cond = self.cond(cond_n) if cond_n is not None else None
        if self.pending:
            raise Unsupported(cond_n, "side effect in a loop condition")
        update = self._flush(self.effect(upd_n)) if upd_n is not None else []
        body = self.stmt(body_n)
        self.scopes.pop()
        return init + [ir.Loop([], cond, update, body, self.span(node), next(self.loop_ids))]


def _continues_test(stmts, cond, span) -> list:
    """`stmts` with each `continue` of the enclosing loop (not of a loop inside) preceded by the
    do-while's test: `if (!c) break;`."""
    out = []
    for s in stmts:
        if isinstance(s, ir.Continue):
            out.append(ir.If(ir.UnOp("!", cond), [ir.Break(span)], [], span))
            out.append(s)
        elif isinstance(s, ir.If):
            out.append(ir.If(s.cond, _continues_test(s.then, cond, span), _continues_test(s.orelse, cond, span),
                             s.span))
        else:
            out.append(s)
    return out


def switch_groups(lowering, groups: list[tuple[list, list]], sel: str, fell: str, broke: str,
                  span: ir.Span) -> list[ir.Stmt]:
    """A switch's groups (labels: case values, None for `default`; statements) as guarded blocks,
    for the Lark and clang lowerings alike: each runs when an earlier group fell into it or one of
    its labels matches the selector `sel`, and no `break` of the switch (`broke`) was taken."""
    cases = [lab for labels, _ in groups for lab in labels if lab is not None]
    no_case = _all(ir.UnOp("!", ir.BinOp("==", ir.Var(sel), c)) for c in cases)
    out: list[ir.Stmt] = []
    lowering.scopes.append({})
    try:
        for labels, stmts in groups:
            match = _any(no_case if lab is None else ir.BinOp("==", ir.Var(sel), lab) for lab in labels)
            guard = ir.BinOp("&&", ir.UnOp("!", ir.Var(broke)), ir.BinOp("||", ir.Var(fell), match))
            body = [ir.Assign(fell, ir.Const(1), span)]
            for st in stmts:
                body.extend(lowering.stmt(st))
            out.append(ir.If(guard, jumps_to_flag(body, broke, span, ir.Break, _has_break), [], span))
    finally:
        lowering.scopes.pop()
    return out


def _any(terms) -> ir.Expr:
    out = None
    for t in terms:
        out = t if out is None else ir.BinOp("||", out, t)
    return out if out is not None else ir.Const(0)


def _all(terms) -> ir.Expr:
    out = None
    for t in terms:
        out = t if out is None else ir.BinOp("&&", out, t)
    return out if out is not None else ir.Const(1)


def _has_break(stmts) -> bool:
    """A `break` of the switch among `stmts` (one inside a loop is the loop's)."""
    return any(isinstance(s, ir.Break) or isinstance(s, ir.If) and (_has_break(s.then) or _has_break(s.orelse))
               for s in stmts)


def jumps_to_flag(stmts, flag: str, span, jump: type, may_jump) -> list:
    """`stmts` with each `jump` (a switch's `break`, an inlined call's `return`) setting `flag`,
    and what follows a branch that `may_jump` guarded by `!flag`: linear in the statements, no
    copies."""
    out = []
    for i, s in enumerate(stmts):
        if isinstance(s, jump):
            out.append(ir.Assign(flag, ir.Const(1), s.span))
            return out   # the rest is dead
        if isinstance(s, ir.If) and (may_jump(s.then) or may_jump(s.orelse)):
            out.append(ir.If(s.cond, jumps_to_flag(s.then, flag, span, jump, may_jump),
                             jumps_to_flag(s.orelse, flag, span, jump, may_jump), s.span))
            rest = jumps_to_flag(stmts[i + 1:], flag, span, jump, may_jump)
            if rest:
                out.append(ir.If(ir.UnOp("!", ir.Var(flag)), rest, [], span))
            return out
        out.append(s)
    return out


def returns_out_of_loops(stmts, flag: str) -> list:
    """An inlined function's body with each `return` inside a loop made `flag = 1; break` (and a
    break out of every enclosing loop), each such loop followed by `if (flag) return`: the returns
    left are outside loops, where jumps_to_flag guards what follows them."""
    out = []
    for s in stmts:
        if isinstance(s, ir.Loop) and _returns(s.body):
            out.append(ir.Loop(s.init, s.cond, s.update, _break_on_return(s.body, flag), s.span, s.id))
            out.append(ir.If(ir.Var(flag), [ir.Return(s.span)], [], s.span))
        elif isinstance(s, ir.If) and (_returns(s.then) or _returns(s.orelse)):
            out.append(ir.If(s.cond, returns_out_of_loops(s.then, flag), returns_out_of_loops(s.orelse, flag), s.span))
        else:
            out.append(s)
    return out


def _break_on_return(stmts, flag: str) -> list:
    out = []
    for s in stmts:
        if isinstance(s, ir.Return):
            out += [ir.Assign(flag, ir.Const(1), s.span), ir.Break(s.span)]
        elif isinstance(s, ir.If) and (_returns(s.then) or _returns(s.orelse)):
            out.append(ir.If(s.cond, _break_on_return(s.then, flag), _break_on_return(s.orelse, flag), s.span))
        elif isinstance(s, ir.Loop) and _returns(s.body):
            out.append(ir.Loop(s.init, s.cond, s.update, _break_on_return(s.body, flag), s.span, s.id))
            out.append(ir.If(ir.Var(flag), [ir.Break(s.span)], [], s.span))
        else:
            out.append(s)
    return out


def _returns(stmts) -> bool:
    return any(isinstance(s, ir.Return) or isinstance(s, ir.If) and (_returns(s.then) or _returns(s.orelse))
               or isinstance(s, ir.Loop) and _returns(s.body) for s in stmts)


def _resolve_labels(stmts: list, fresh) -> list:
    """A block's labels, and the `goto`s to them from earlier in the block (at any depth of `if`,
    not inside a loop): `goto L` sets a flag, and what follows it up to L runs only while the flag
    is clear (as inlined returns: `jumps_to_flag`). A goto left over (to an earlier label,
    into a block, out of a loop) is reported by the function's lowering."""
    while True:
        at = next((i for i, s in enumerate(stmts) if isinstance(s, Label)), None)
        if at is None:
            return stmts
        label, span = stmts[at].name, stmts[at].span
        before = stmts[:at]
        if _has_goto(before, label):
            flag = fresh(f"goto.{label}")
            before = [ir.Assign(flag, ir.Const(0), span)] + _gotos_to_flag(before, label, flag)
        stmts = before + stmts[at + 1:]


def _has_goto(stmts, label: str) -> bool:
    return any(isinstance(s, Goto) and s.label == label
               or isinstance(s, ir.If) and (_has_goto(s.then, label) or _has_goto(s.orelse, label))
               for s in stmts)


def _gotos_to_flag(stmts, label: str, flag: str) -> list:
    out = []
    for i, s in enumerate(stmts):
        if isinstance(s, Goto) and s.label == label:
            out.append(ir.Assign(flag, ir.Const(1), s.span))
            return out   # the rest, up to the label, is dead
        if isinstance(s, ir.If) and (_has_goto(s.then, label) or _has_goto(s.orelse, label)):
            out.append(ir.If(s.cond, _gotos_to_flag(s.then, label, flag), _gotos_to_flag(s.orelse, label, flag),
                             s.span))
            rest = _gotos_to_flag(stmts[i + 1:], label, flag)
            if rest:
                out.append(ir.If(ir.UnOp("!", ir.Var(flag)), rest, [], s.span))
            return out
        out.append(s)
    return out


def leftover_goto(stmts) -> Goto | None:
    """A `goto` no label of an enclosing block resolved; the labels no goto needed (one inside a
    switch's case, or an `if` without braces) are dropped from `stmts`, in place."""
    stmts[:] = [s for s in stmts if not isinstance(s, Label)]
    for s in stmts:
        if isinstance(s, Goto):
            return s
        if isinstance(s, ir.If):
            hit = leftover_goto(s.then) or leftover_goto(s.orelse)
            if hit:
                return hit
        if isinstance(s, ir.Loop):
            hit = leftover_goto(s.body) or leftover_goto(s.update) or leftover_goto(s.init)
            if hit:
                return hit
    return None
