"""WGSL that a host renders from a template before it is WGSL: Tera or Jinja (`{{ name }}`,
`{% if %}`, `{% for %}`, `{% include %}`), handlebars' `{{name}}`, and a host string's `{NAME}` or `##NAME##`
that the host's `replace` fills in. The values are the host's (a model's shapes, an element
type), so they come from the user as `-D NAME=VALUE`, a VALUE that reads as JSON (`3`, `[1, 64]`,
`"Relu"`) taken as that value, any other as its text; a name the template needs and no -D gives is
one line naming every such name. Rendered by Jinja in its sandbox with Tera's named-argument
built-ins (`range(end=n)`, `replace(from=, to=)`, `nth(n=)`), includes looked up beside the file
and in the -I folders. The rendered text is what is checked, its positions the rendered text's
(`FILE.rendered`), as GLSL's are its disassembly's.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from analyzer.errors import KernelraceError

_BLOCK = re.compile(r"\{\{.*?\}\}|\{%.*?%\}", re.DOTALL)
_HOST_STRING = re.compile(r"\{([A-Z_][A-Z0-9_]*)\}|##([A-Za-z_]\w*)##")   # `{OUTPUT_FORMAT}`, `##TEXTURE_FORMAT##`
SUFFIX = ".rendered"


def is_template(text: str) -> bool:
    return ("{{" in text or "{%" in text) and _BLOCK.search(text) is not None


def _value(text: str):
    try:
        return json.loads(text)
    except ValueError:
        return text


MAX_RANGE = 100_000       # as Jinja's sandbox bounds its own range()


def _tera_range(*args, start=0, end=None, step_by=1):
    r = range(*args) if args else range(int(start), int(end), int(step_by))   # Jinja's form, or Tera's
    if len(r) > MAX_RANGE:
        raise ValueError(f"range of {len(r)} items (at most {MAX_RANGE})")
    return r


def _tera_replace(s, *args, **kw):
    old = kw.pop("from", args[0] if args else None)
    new = kw.pop("to", args[1] if len(args) > 1 else None)
    if old is None or new is None or kw:
        raise ValueError("replace(from=..., to=...)")
    return str(s).replace(str(old), str(new))


def _tera_nth(seq, n):
    return list(seq)[int(n)]


def _environment(filename: str, include_dirs):
    from jinja2 import StrictUndefined
    from jinja2.sandbox import SandboxedEnvironment
    folders = [str(Path(filename).parent)] + [str(d) for d in include_dirs]
    env = SandboxedEnvironment(loader=_Loader(folders).loader, undefined=StrictUndefined,
                               keep_trailing_newline=True, autoescape=False)
    env.globals["range"] = _tera_range
    env.filters["replace"] = _tera_replace
    env.filters["nth"] = _tera_nth
    return env


_TAG = re.compile(r"\{%-?\s*(for|endfor|set_global)\b")


def _tera_tags(source: str, filename: str) -> str:
    """Tera's `set_global` outside any loop is Jinja's `set`; inside one (where the two differ) it
    is refused."""
    depth = 0
    out = []
    last = 0
    for m in _TAG.finditer(source):
        kind = m.group(1)
        if kind == "for":
            depth += 1
        elif kind == "endfor":
            depth -= 1
        else:
            if depth:
                line = source.count("\n", 0, m.start()) + 1
                raise KernelraceError(f"{filename}:{line}:1: unsupported construct: Tera's set_global inside a loop")
            out.append(source[last:m.start(1)] + "set")
            last = m.end(1)
    out.append(source[last:])
    return "".join(out)


_EXPR = re.compile(r"\{\{(-?)(.*?)(-?)\}\}", re.DOTALL)


def _tera_filters(source: str) -> str:
    """Tera applies a filter to the whole math expression before it (`{{ n / 4 | int }}` is
    `(n / 4) | int`), Jinja to the operand next to it: the expression is parenthesised."""
    def one(m: re.Match) -> str:
        body = m.group(2)
        depth, quote = 0, None
        for i, ch in enumerate(body):
            if quote:
                quote = None if ch == quote else quote
            elif ch in "\"'":
                quote = ch
            elif ch in "([":
                depth += 1
            elif ch in ")]":
                depth -= 1
            elif ch == "|" and depth == 0:
                head = body[:i]
                if re.search(r"[-+*/%]", head):
                    return "{{" + m.group(1) + "(" + head + ")" + body[i:] + m.group(3) + "}}"
                break
        return m.group(0)
    return _EXPR.sub(one, source)


class _Loader:
    """Jinja's file loader, each template read through `_tera_tags`."""

    def __init__(self, folders):
        from jinja2 import FileSystemLoader

        class Tera(FileSystemLoader):
            def get_source(self, environment, template):
                text, path, uptodate = super().get_source(environment, template)
                return _tera_filters(_tera_tags(text, path)), path, uptodate
        self.loader = Tera(folders)


def _needed(env, source: str, filename: str) -> set[str]:
    """Every name the template and the templates it includes read without setting it."""
    from jinja2 import meta, nodes
    seen: set[str] = set()
    read: set[str] = set()
    assigned: set[str] = set()
    pending = [(source, filename)]
    while pending:
        src, name = pending.pop()
        tree = env.parse(src, name=name)
        read |= meta.find_undeclared_variables(tree)
        for node in tree.find_all((nodes.Assign, nodes.For)):
            assigned |= {n.name for n in node.target.find_all(nodes.Name)} | (
                {node.target.name} if isinstance(node.target, nodes.Name) else set())
        for ref in meta.find_referenced_templates(tree):
            if ref is None or ref in seen:
                continue
            seen.add(ref)
            try:
                text, path, _ = env.loader.get_source(env, ref)
            except Exception:
                raise KernelraceError(f"{filename}:1:1: the template includes '{ref}', not found beside "
                                      f"the file nor in an -I folder") from None
            pending.append((text, path))
    return read - assigned - set(env.globals)


def render(text: str, filename: str, macros, include_dirs) -> tuple[str, str, tuple]:
    """(rendered text, the name its positions refer to, the -D macros the template did not take:
    those go on to the `#ifdef` preprocessor)."""
    from jinja2 import TemplateError, TemplateSyntaxError, UndefinedError
    given = {name: value for name, value in macros if "(" not in name}
    taken: set[str] = set()
    name = filename
    if is_template(text):
        name = filename + SUFFIX
        env = _environment(filename, include_dirs)
        text = _tera_filters(_tera_tags(text, filename))
        try:
            needed = _needed(env, text, filename)
        except TemplateSyntaxError as exc:
            raise KernelraceError(f"{exc.filename or filename}:{exc.lineno or 1}:1: template syntax error: "
                                  f"{exc.message}") from None
        except RecursionError:
            # Jinja's parser recurses per nesting level: a mutant with thousands of open brackets.
            raise KernelraceError(f"{filename}:1:1: the template nests too deeply to read") from None
        taken = needed & set(given)
        try:
            text = env.from_string(text).render({n: _value(given[n]) for n in taken})
        except UndefinedError:
            # Every name it reads and no -D gives, though the branches taken may need fewer.
            missing = sorted(needed - set(given))
            raise KernelraceError(
                f"{filename}:1:1: unsupported construct: a template (Tera, Jinja or handlebars) that its host "
                f"renders with values of its own: pass {' '.join(f'-D {n}=VALUE' for n in missing)} "
                f"(a VALUE that reads as JSON is that value: -D 'shape=[1,64]')") from None
        except TemplateError as exc:
            raise KernelraceError(f"{filename}:1:1: the template does not render with the -D values: "
                                  f"{exc.__class__.__name__}: {exc}") from None
        except RecursionError:
            raise KernelraceError(f"{filename}:1:1: the template includes itself (nested too deeply)") from None
        except (ValueError, TypeError, IndexError, KeyError, ZeroDivisionError, OverflowError) as exc:
            raise KernelraceError(f"{filename}:1:1: the template does not render with the -D values: {exc}") from None
    host = {m.group(1) or m.group(2) for m in _HOST_STRING.finditer(text)} & set(given)
    if host:
        text = _HOST_STRING.sub(lambda m: given[m.group(1) or m.group(2)] if (m.group(1) or m.group(2)) in host
                                else m.group(0), text)
        taken |= host
    rest = tuple((n, v) for n, v in macros if n not in taken)
    return text, name, rest


def needs_rendering(text: str, macros) -> bool:
    """A Tera/Jinja template, or a host string's `{NAME}`/`##NAME##` that -D gives (WGSL never writes
    one; its lines stay where they are, so its positions stay the file's)."""
    if is_template(text):
        return True
    given = {name for name, _ in macros}
    return any((m.group(1) or m.group(2)) in given for m in _HOST_STRING.finditer(text))
