"""MkDocs hook for the documentation site (mkdocs.yml): a link from a page to a file or folder of
the repository that is not a page (`../analyzer/ir.py`, `../../rules/barrier_scope.py`,
`generate.py`, `.`) resolves on GitHub, where the pages are also read, but not on the site; the
site links it to the repository's copy instead. A link that resolves to nothing is left alone, so that
`mkdocs build --strict` fails on it."""

from __future__ import annotations

import posixpath
import re
from pathlib import Path

_LINK = re.compile(r"(\[[^\]]*\]\()([^)\s#]+)(#[^)\s]*)?(\))")
_FENCE = re.compile(r"^(```|~~~).*?^\1", re.S | re.M)


def on_page_markdown(markdown: str, page, config, files):
    docs = Path(config["docs_dir"]).resolve()
    root = docs.parent
    repo = config.get("repo_url", "").rstrip("/")
    here = (docs / page.file.src_uri).parent

    def rewrite(m: re.Match) -> str:
        target = m.group(2)
        if re.match(r"[a-z][a-z0-9+.-]*:", target):
            return m.group(0)                 # http(s), mailto
        path = (here / target).resolve()
        if not path.exists() or not path.is_relative_to(root):
            return m.group(0)
        if path.is_relative_to(docs) and path.is_file() and path.suffix == ".md":
            return m.group(0)                 # a page of the site
        kind = "tree" if path.is_dir() else "blob"
        rel = posixpath.join(*path.relative_to(root).parts)
        return f"{m.group(1)}{repo}/{kind}/main/{rel}{m.group(3) or ''}{m.group(4)}"

    out, last = [], 0
    for fence in _FENCE.finditer(markdown):    # links inside code blocks are code
        out.append(_LINK.sub(rewrite, markdown[last:fence.start()]))
        out.append(fence.group(0))
        last = fence.end()
    out.append(_LINK.sub(rewrite, markdown[last:]))
    return "".join(out)
