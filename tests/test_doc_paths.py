"""Module paths named in the README and in docstrings exist: a reshape leaves no stale name.

A dotted name ``embedding_ttc.a.b.C`` must resolve to a module of ``src/`` (the longest
prefix that is one), and what follows, if anything, must be defined at that module's top
level (a function, class, assignment or import). File paths ``src/embedding_ttc/...`` must
exist.
"""

from __future__ import annotations

import ast
import re
from functools import cache
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SRC = REPO / "src"
DOTTED = re.compile(r"(?<![\w/.])embedding_ttc(?:\.[A-Za-z_]\w*)+")
FILE = re.compile(r"src/embedding_ttc/[\w/]+(?:\.\w+)?")


def _module_file(dotted: str) -> Path | None:
    base = SRC / Path(*dotted.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


@cache
def _top_level_names(path: Path) -> frozenset[str]:
    names: set[str] = set()
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names.update(t.id for t in targets if isinstance(t, ast.Name))
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
    return frozenset(names)


def unresolved(dotted: str) -> str | None:
    """Why ``dotted`` does not resolve, or ``None`` when it does."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        path = _module_file(".".join(parts[:cut]))
        if path is None:
            continue
        rest = parts[cut:]
        if rest and rest[0] not in _top_level_names(path):
            return f"{'.'.join(parts[:cut])} defines no {rest[0]!r}"
        return None
    return "no such module"


def _documents() -> list[Path]:
    return [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md")), *sorted(SRC.rglob("*.py"))]


def test_the_resolver_tells_a_stale_name() -> None:
    assert unresolved("embedding_ttc.cli.common.run_command") is None
    assert unresolved("embedding_ttc.cli.common") is None
    assert unresolved("embedding_ttc.cli.common.no_such_thing") is not None
    assert unresolved("embedding_ttc.cli_search") is not None


def test_named_module_paths_exist() -> None:
    stale: list[str] = []
    for doc in _documents():
        text = doc.read_text()
        for match in sorted(set(DOTTED.findall(text))):
            why = unresolved(match.rstrip("."))
            if why:
                stale.append(f"{doc.relative_to(REPO)}: {match}: {why}")
        for match in sorted(set(FILE.findall(text))):
            if not (REPO / match).exists():
                stale.append(f"{doc.relative_to(REPO)}: {match}: no such file")
    assert not stale, "stale paths:\n" + "\n".join(stale)
