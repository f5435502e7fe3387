"""Lark's basic lexer with its per-token loop in one function: the same terminals, the same
combined regular expression and keyword table, the same tokens with the same positions.

Lark's `BasicLexer.next_token` costs about as much as the LALR parse itself: per token a
method call to match, a tuple, a `Token(...)` through keyword handling, a line counter's method,
and for every NAME a keyword scanner's fullmatch. Here all of it is inline, keywords are a dict
(when they are plain strings), and a newline is looked for only in the terminals that can hold
one. Anything this loop does not handle the way Lark does (several regular expressions for one
lexer, a callback other than keywords, a character nothing matches) goes to Lark's own code."""

from __future__ import annotations

from lark.lexer import BasicLexer, PatternStr, Token, UnlessCallback


def _keywords(callback) -> dict[str, str] | None:
    """The keyword table of an UnlessCallback whose terminals are plain strings without flags, as
    {text: terminal}; its fullmatch picks the first alternative that matches, so the first wins."""
    if type(callback) is not UnlessCallback:
        return None
    table: dict[str, str] = {}
    for t in callback.scanner.terminals:
        if type(t.pattern) is not PatternStr or t.pattern.flags:
            return None
        table.setdefault(str(t.pattern.value), str(t.name))
    return table


class FastBasicLexer(BasicLexer):
    """Given to Lark as its BasicLexer (the `_plugins` hook); the parser drives it as Lark's."""

    _plan = None

    def _prepare(self):
        scanner = self.scanner      # built on first use, with self.callback
        keywords = {str(name): _keywords(cb) for name, cb in self.callback.items()}
        # Lark's internals as of 1.2-1.3; another Lark gets its own loop.
        mres, new = getattr(scanner, "_mres", None), getattr(Token, "_future_new", None)
        if mres is None or new is None or len(mres) != 1 or any(k is None for k in keywords.values()):
            self._plan = False
        else:
            # Plain strings: a parser loaded from Lark's cache names terminals with Tokens, whose
            # __eq__ (in Python) every set or dict lookup that finds one would call.
            self._plan = (mres[0].match, new, keywords, frozenset(map(str, self.ignore_types)),
                          frozenset(map(str, self.newline_types)))
        return self._plan

    def lex(self, state, parser_state):
        plan = self._plan if self._plan is not None else self._prepare()
        if not plan or state.text.start != 0:
            yield from BasicLexer.lex(self, state, parser_state)
            return
        match, new, keywords, ignore, newline_types = plan
        ctr = state.line_ctr
        text, end = state.text.text, state.text.end
        pos, line, line_start = ctr.char_pos, ctr.line, ctr.line_start_pos
        last = state.last_token
        while pos < end:
            m = match(text, pos, end)
            if m is None:
                break
            value, kind = m.group(0), m.lastgroup
            after = m.end()
            col = pos - line_start + 1
            if kind in newline_types:
                n = value.count("\n")
                if n:
                    line_at = line
                    line += n
                    line_start = pos + value.rindex("\n") + 1
                else:
                    line_at = line
            else:
                line_at = line
            if kind in ignore:
                pos = after
                continue
            table = keywords.get(kind)
            if table is not None:
                kind = table.get(value, kind)
            last = new(kind, value, pos, line_at, col, line, after - line_start + 1, after)
            pos = after
            yield last
        # Hand the position back: at the end, or at a character no terminal matches, where
        # Lark's own next_token raises its UnexpectedCharacters with everything it names.
        ctr.char_pos, ctr.line, ctr.line_start_pos = pos, line, line_start
        ctr.column = pos - line_start + 1
        state.last_token = last
        if pos < end:
            yield from BasicLexer.lex(self, state, parser_state)
