"""Loading, before containment, every module a program can reach: afterwards no import works.

Once the audit hook is in place no new module can be loaded (an import reads files), so the
child imports numpy's lazily loaded submodules, the allowed modules the program names and the
modules that functions of our own allowed modules import inside their bodies.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from types import ModuleType
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import ast

NUMPY_LAZY_SUBMODULES = ("numpy.ma", "numpy.linalg", "numpy.fft", "numpy.polynomial")

STDLIB_LAZY_CODECS = ("encodings.idna",)
"""Codecs the standard library looks up on first use: ``socket`` encodes a host name with
``idna``. Loaded before containment, so that a program's network call reaches the audit hook
and is reported as one, not as a codec missing because its import was refused (which depended
on whether some package the child imported happened to load the codec first)."""


def preload(tree: ast.Module) -> None:
    """Import, before containment, every module the program can reach by name.

    Once the audit hook is in place no new module can be loaded (an import reads files).
    So this imports the allowed modules the program imports, walks its attribute chains
    (``np.polynomial.polynomial`` triggers numpy's lazy submodule import), and imports the
    modules that functions of our own allowed modules import inside their bodies, for the
    functions the program names (``rrf`` imports ``scipy.stats`` lazily).
    """
    import ast
    import importlib

    from embedding_ttc.program_files.checks.imports import (
        import_aliases,
        module_allowed,
        qualified_name,
    )

    # numpy imports these on first use from inside its own functions (np.median reaches
    # numpy.ma), where no attribute chain of the program names them.
    for module in (*NUMPY_LAZY_SUBMODULES, *STDLIB_LAZY_CODECS):
        importlib.import_module(module)
    aliases = import_aliases(tree)
    names: set[str] = set(aliases.values())
    used: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module)
        elif isinstance(node, (ast.Name, ast.Attribute)):
            used.add(node.id if isinstance(node, ast.Name) else node.attr)
            dotted = qualified_name(node, aliases)
            if dotted is not None:
                names.add(dotted)
    for dotted in sorted(names):
        _walk_chain(dotted, module_allowed, importlib.import_module)
    ours = {m for m in sys.modules if m.startswith("embedding_ttc.") and module_allowed(m)}
    for module in sorted(_lazy_imports(ours, used)):
        try:
            importlib.import_module(module)
        except Exception:  # the program will fail on it later, and say so
            continue


def _walk_chain(dotted: str, allowed: Callable[[str], bool], load: Callable[[str], object]) -> None:
    """Import or touch each allowed module prefix of ``a.b.c`` (``getattr`` loads lazily)."""
    from embedding_ttc.program_files.checks.imports import unsafe_name

    parts = dotted.split(".")
    obj: object = None
    for i in range(len(parts)):
        prefix, part = ".".join(parts[: i + 1]), parts[i]
        if obj is None and not allowed(prefix):
            continue  # embedding_ttc.programs: the allowed part starts further down
        if not allowed(prefix) or unsafe_name(prefix) is not None:
            return
        try:
            child = getattr(obj, part, None) if obj is not None else None
            obj = child if child is not None else load(prefix)
        except Exception:
            return
        if not isinstance(obj, ModuleType):
            return


def _lazy_imports(modules: Iterable[str], used: set[str]) -> set[str]:
    """Modules imported inside functions of ``modules`` that the names in ``used`` reach."""
    todo = [(m, n) for m in modules for n in used]
    seen: set[tuple[str, str]] = set()
    found: set[str] = set()
    cache: dict[str, _ModuleInfo | None] = {}
    while todo:
        module, name = todo.pop()
        if (module, name) in seen:
            continue
        seen.add((module, name))
        if module not in cache:
            cache[module] = _ModuleInfo.read(module)
        info = cache[module]
        if info is None:
            continue
        if name in info.imported:
            todo.append(info.imported[name])
        elif name in info.lazy:
            found |= info.lazy[name]
            todo.extend((module, ref) for ref in info.refs[name])
    return found


@dataclass(frozen=True)
class _ModuleInfo:
    """Per top-level definition of one of our modules: lazy imports and names referenced."""

    lazy: dict[str, set[str]]
    refs: dict[str, set[str]]
    imported: dict[str, tuple[str, str]]

    @classmethod
    def read(cls, module: str) -> _ModuleInfo | None:
        import ast

        mod = sys.modules.get(module)
        path = getattr(mod, "__file__", None)
        if not module.startswith("embedding_ttc.") or not path:
            return None
        try:
            with open(path, encoding="utf-8") as fh:
                tree = ast.parse(fh.read())
        except (OSError, SyntaxError, ValueError):
            return None
        lazy: dict[str, set[str]] = {}
        refs: dict[str, set[str]] = {}
        imported: dict[str, tuple[str, str]] = {}
        for stmt in tree.body:
            if isinstance(stmt, ast.ImportFrom) and stmt.module and not stmt.level:
                for alias in stmt.names:
                    imported[alias.asname or alias.name] = (stmt.module, alias.name)
            elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                lazy[stmt.name], refs[stmt.name] = set(), set()
                for node in ast.walk(stmt):
                    if isinstance(node, ast.Import):
                        lazy[stmt.name].update(a.name for a in node.names)
                    elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                        lazy[stmt.name].add(node.module)
                    elif isinstance(node, ast.Name):
                        refs[stmt.name].add(node.id)
        return cls(lazy, refs, imported)
