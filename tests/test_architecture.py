"""The package's import graph: no module of ``src/`` reaches itself through its imports.

Every import counts, the lazy ones inside functions included (they are how circles hide), and
so do ``TYPE_CHECKING`` imports: a circle that type checkers must follow is still a circle in
the design. An import of a package counts as an import of its ``__init__``.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = "embedding_ttc"
SRC = Path(__file__).resolve().parents[1] / "src" / PACKAGE


def _module_name(path: Path) -> str:
    parts = path.relative_to(SRC.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in sorted(SRC.rglob("*.py"))}


def _resolve(name: str, modules: dict[str, Path]) -> str | None:
    """The longest prefix of ``name`` that is a module of the package."""
    while name and name not in modules:
        name = name.rpartition(".")[0]
    return name or None


def _imports(module: str, path: Path, modules: dict[str, Path]) -> set[str]:
    is_package = path.name == "__init__.py"
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = module.split(".")
                anchor = anchor[: len(anchor) - node.level + (1 if is_package else 0)]
                base = ".".join([*anchor, base] if base else anchor)
            # ``from pkg import sub`` imports the submodule ``pkg.sub`` when there is one.
            targets = [f"{base}.{a.name}" for a in node.names] + [base]
        for target in targets:
            if target.split(".")[0] != PACKAGE:
                continue
            resolved = _resolve(target, modules)
            if resolved and resolved != module:
                found.add(resolved)
    return found


def import_graph() -> dict[str, set[str]]:
    """Module -> the package modules it imports (directly, anywhere in its body)."""
    modules = _modules()
    return {m: _imports(m, p, modules) for m, p in modules.items()}


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_the_finder_sees_a_circle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert circles(graph) == [["a", "b", "c"]]
    assert circles({"a": {"b"}, "b": set()}) == []


def test_the_graph_reads_lazy_imports() -> None:
    graph = import_graph()
    assert f"{PACKAGE}.errors" in graph
    # The evaluate command imports the evaluator lazily, inside a function.
    assert f"{PACKAGE}.evaluation.evaluate" in graph[f"{PACKAGE}.cli.evaluate"]
    # ``from embedding_ttc.cli.common import x`` is an import of that module, not of the package.
    assert f"{PACKAGE}.cli.common" in graph[f"{PACKAGE}.cli.deploy"]
    assert f"{PACKAGE}.cli" not in graph[f"{PACKAGE}.cli.deploy"]


def test_no_import_circles() -> None:
    found = circles(import_graph())
    assert not found, "import circles between modules of src/:\n" + "\n".join(
        " <-> ".join(c) for c in found
    )
