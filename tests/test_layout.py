"""The package layout: the project's own modules import each other without a cycle.

Dependencies point one way (front ends and TVM builds produce IR, the analysis reads IR, rules
read the analysis, reports read findings, the entry points read everything). Imports inside
functions count: a lazy import hides a cycle from Python, not from a reader.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("analyzer", "rules", "grammars")


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for pkg in PACKAGES for p in (ROOT / pkg).rglob("*.py")}


_TREES: dict[tuple[str, str], ast.Module] = {}


def _tree(path: Path) -> ast.Module:
    """The module's syntax tree, parsed once per text (four tests walk every module: 3 s each)."""
    text = path.read_text()
    key = (str(path), text)
    if key not in _TREES:
        _TREES[key] = ast.parse(text, str(path))
    return _TREES[key]


def _imports(name: str, path: Path, known: set[str]) -> set[str]:
    """The project modules `name` imports (a package counts as its `__init__`)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out = set()
    for node in ast.walk(_tree(path)):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            # `from pkg import mod` imports the module pkg.mod when there is one
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in node.names]
        else:
            continue
        for t in targets:
            while t and t not in known:
                t = t.rpartition(".")[0]
            if t and t != name:
                out.add(t)
    return out


def import_graph() -> dict[str, set[str]]:
    mods = _modules()
    return {name: _imports(name, path, set(mods)) for name, path in mods.items()}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One cycle per strongly connected component with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_the_graph_sees_the_packages():
    graph = import_graph()
    assert "analyzer.analysis.pairing.races" in graph["analyzer.analysis.kernel"]
    assert "analyzer.frontend" in graph["analyzer.pipeline"]


def test_no_import_cycles():
    assert _cycles(import_graph()) == []


# What each stage may import besides the shared vocabulary (the IR, findings, messages, errors).
# The entry points (cli, pipeline, the command line's helpers in command/, the TVM checks in
# tvm_checks/) may import all.
CORE = {"analyzer.ir", "analyzer.errors", "analyzer.findings", "analyzer.messages"}
MAY_IMPORT = {
    "core": set(),
    "frontend": set(),
    "tvm": {"frontend"},           # the Vulkan path compiles its GLSL with the front end's tools
    "analysis": {"dynamic"},       # a pair the solver cannot decide is looked for in a run
    # The interpreter reads the IR only, like the analysis; the OpenCL run (opencl_run.py) launches
    # TVM's built module with the launch shapes TVM's host code computes.
    "dynamic": {"tvm"},
    "rules": {"analysis"},
    "report": {"frontend", "rules"},  # SARIF embeds SPIR-V artifacts and describes every rule
}


def _stage(module: str) -> str:
    parts = module.split(".")
    if module in CORE:
        return "core"
    if parts[0] == "rules":
        return "rules"
    if parts[0] == "analyzer" and len(parts) > 1 and parts[1] in MAY_IMPORT:
        return parts[1]
    return "entry"


def test_dependencies_point_one_way():
    wrong = sorted(
        f"{m} imports {t}"
        for m, deps in import_graph().items() if _stage(m) != "entry"
        for t in deps
        if _stage(t) != _stage(m) and _stage(t) != "core" and _stage(t) not in MAY_IMPORT[_stage(m)]
    )
    assert wrong == []


def test_a_cycle_is_found():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_no_class_is_over_500_lines():
    big = sorted(f"{m}.{node.name}: {node.end_lineno - node.lineno + 1} lines"
                 for m, path in _modules().items()
                 for node in ast.walk(_tree(path))
                 if isinstance(node, ast.ClassDef) and node.end_lineno - node.lineno + 1 > 500)
    assert big == []


def test_no_analysis_module_is_over_600_lines():
    """The analysis reads in rooms of small modules (analyzer/analysis/*/): none over 600 lines."""
    big = sorted(f"{m}: {n} lines" for m, path in _modules().items()
                 if m.startswith("analyzer.analysis") and (n := len(path.read_text().splitlines())) > 600)
    assert big == []


def test_the_package_top_holds_the_spine_and_the_vocabulary():
    """The rest of `analyzer/` is in rooms named after whom they serve: the command line
    (command/), TVM builder authors (tvm_checks/), the front ends, the analysis, the dynamic side,
    the reports. `tvm_hook.py` and `workloads.py` are the names users import, kept as aliases."""
    top = sorted(p.name for p in (ROOT / "analyzer").glob("*.py"))
    assert top == ["__init__.py", "cli.py", "errors.py", "findings.py", "ir.py", "messages.py", "pipeline.py",
                   "tvm_hook.py", "workloads.py"]


def test_every_analysis_module_is_in_a_room():
    """Only the package's own `__init__` and `kernel.py` (which runs the rooms) sit at its top."""
    top = sorted(p.name for p in (ROOT / "analyzer" / "analysis").glob("*.py"))
    assert top == ["__init__.py", "kernel.py"]
    rooms = [p for p in (ROOT / "analyzer" / "analysis").iterdir() if p.is_dir() and p.name != "__pycache__"]
    assert all((room / "__init__.py").read_text().startswith('"""') for room in rooms)
