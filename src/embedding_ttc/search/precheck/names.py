"""What names a program's source binds, read off its tree (the repairs' shared view of scope).

A repair that adds an import needs every bound name; one that follows an import to the
primitive it names needs the names bound some other way, which would shadow it.
"""

from __future__ import annotations

import ast

__all__ = ["bound_names"]


def bound_names(tree: ast.Module, *, imports: bool = True) -> set[str]:
    """Every name the module binds anywhere: definitions, arguments, assignments, handlers.

    Args:
        tree: the parsed module.
        imports: count the names imports bind (``import a.b`` binds ``a``).

    """
    bound: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            if imports:
                bound.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            bound.add(node.name)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            bound.add(node.id)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound.add(node.name)
    return bound
