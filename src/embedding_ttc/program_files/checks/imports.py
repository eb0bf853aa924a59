"""The import rules (constraint 4, and 3 for ``random``-like modules) and name resolution.

Only :data:`~embedding_ttc.program_files.contract.ALLOWED_MODULES`; a plain entry such as ``numpy``
admits its submodules too (``numpy.linalg``, ``collections.abc``), as an entry ending in
``.*`` does; no relative or star import, no private module (``numpy._core``), no test suite
or numpy file and memory escape. The sandbox's child resolves names with the same functions
when it preloads a program's modules, so this module imports nothing heavy.
"""

from __future__ import annotations

import ast

from embedding_ttc.program_files.checks.rules import (
    FORBIDDEN_NAMES,
    NONDETERMINISTIC_MODULES,
    NUMPY_UNSAFE,
    TEST_SEGMENTS,
    ProgramRejected,
    is_dunder,
)
from embedding_ttc.program_files.contract import ALLOWED_MODULES


def module_allowed(name: str) -> bool:
    """Whether ``import name`` is admitted by :data:`ALLOWED_MODULES` (submodules included)."""
    for entry in ALLOWED_MODULES:
        base = entry.removesuffix(".*")
        if name == base or name.startswith(base + "."):
            return True
    return False


def import_aliases(tree: ast.Module) -> dict[str, str]:
    """Local names bound by the file's imports, mapped to what they import.

    ``import numpy as np`` gives ``{"np": "numpy"}``; ``import numpy.random`` gives
    ``{"numpy": "numpy"}``; ``from numpy.random import default_rng as rng`` gives
    ``{"rng": "numpy.random.default_rng"}``. Imports anywhere in the file count (a name bound
    in one function and reused in another is resolved all the same).
    """
    aliases: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    aliases[alias.asname] = alias.name
                else:
                    root = alias.name.split(".")[0]
                    aliases[root] = root
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            for alias in node.names:
                if alias.name != "*":
                    aliases[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    return aliases


def qualified_name(node: ast.expr, aliases: dict[str, str]) -> str | None:
    """``np.random.rand`` as ``numpy.random.rand`` when its root is an imported name."""
    if isinstance(node, ast.Name):
        return aliases.get(node.id)
    if isinstance(node, ast.Attribute):
        base = qualified_name(node.value, aliases)
        return None if base is None else f"{base}.{node.attr}"
    return None


def check_imports(tree: ast.Module) -> None:
    """Check every import of the file (anywhere in it)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                _check_module(alias.name, node.lineno)
                _check_alias(alias, node.lineno)
        elif isinstance(node, ast.ImportFrom):
            _check_import_from(node)


def _check_import_from(node: ast.ImportFrom) -> None:
    if node.level:
        raise ProgramRejected(
            f"no-external-model: relative import at line {node.lineno} is not allowed"
        )
    module = node.module or ""
    if module == "__future__":
        return
    _check_module(module, node.lineno)
    for alias in node.names:
        if alias.name == "*":
            raise ProgramRejected(
                f"no-external-model: 'from {module} import *' at line {node.lineno} is not "
                "allowed (import the names you use)"
            )
        _check_alias(alias, node.lineno)
        check_unsafe_name(f"{module}.{alias.name}", node.lineno)


def _check_alias(alias: ast.alias, line: int) -> None:
    bound = alias.asname or alias.name
    if is_dunder(bound) or bound in FORBIDDEN_NAMES:
        raise ProgramRejected(
            f"no-external-model: binding the name '{bound}' at line {line} is not allowed"
        )


def _check_module(name: str, line: int) -> None:
    root = name.split(".")[0]
    if root in NONDETERMINISTIC_MODULES:
        raise ProgramRejected(
            f"deterministic: import of '{name}' at line {line} is not allowed (no randomness "
            "without a fixed seed, no dependence on time; use np.random.default_rng(<int>))"
        )
    if not module_allowed(name):
        raise ProgramRejected(
            f"no-external-model: import of '{name}' at line {line} is not allowed "
            f"(allowed: {', '.join(ALLOWED_MODULES)})"
        )
    check_unsafe_name(name, line)


def unsafe_name(qualified: str) -> str | None:
    """Why a qualified name inside an allowed module is refused, or ``None``.

    Private members (``numpy._core``), test suites shipped in packages (``numpy.lib.tests``)
    and numpy's file and memory escapes (:data:`NUMPY_UNSAFE`) are refused.
    """
    parts = qualified.split(".")
    if any(p.startswith("_") for p in parts[1:]):
        return "is private; use the public API"
    if TEST_SEGMENTS.intersection(parts) or any(
        qualified == u or qualified.startswith(u + ".") for u in NUMPY_UNSAFE
    ):
        return "is not allowed (no file access, raw memory or test tooling)"
    return None


def check_unsafe_name(qualified: str, line: int) -> None:
    """Refuse a qualified name that :func:`unsafe_name` refuses."""
    why = unsafe_name(qualified)
    if why is not None:
        raise ProgramRejected(f"no-external-model: '{qualified}' at line {line} {why}")
