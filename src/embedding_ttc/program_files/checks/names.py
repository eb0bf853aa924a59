"""The rules on names, attributes, calls and literals, checked in one pass over the tree.

* ``no-external-model``: no forbidden builtin, no dunder name or attribute (except defining
  ``__init__`` / ``__call__`` in a class), no frame or code introspection attribute, no numpy
  file access, ``ctypes`` or ``as_strided``;
* ``task-universal``: ``ctx`` is used only through its fields; no string literal equals
  (case-folded) the name of a task;
* ``deterministic``: ``numpy.random`` only through a generator seeded with an integer literal;
  no ``hash()`` or ``id()``.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable

from embedding_ttc.program_files.checks.imports import check_unsafe_name, qualified_name
from embedding_ttc.program_files.checks.rules import (
    CONTEXT_FIELDS,
    DUNDER_METHODS,
    FORBIDDEN_NAMES,
    INTROSPECTION_ATTRIBUTES,
    NONDETERMINISTIC_BUILTINS,
    RANDOM_TYPES,
    SEEDED_RANDOM_CALLS,
    UNSAFE_ATTRIBUTES,
    ProgramRejected,
    is_dunder,
)


def bound_names(tree: ast.Module) -> frozenset[str]:
    """Every name the file binds anywhere (variables, parameters, definitions, imports)."""
    return frozenset(name for node in ast.walk(tree) if (name := _binding(node)))


def _binding(node: ast.AST) -> str | None:
    if isinstance(node, ast.Name):
        return node.id if isinstance(node.ctx, ast.Store) else None
    if isinstance(node, ast.arg):
        return node.arg
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.ExceptHandler)):
        return node.name
    if isinstance(node, ast.alias):
        return node.asname or node.name.split(".")[0]
    return None


def _seed_literal(call: ast.Call) -> bool:
    """Whether a call has exactly one argument, a non-negative integer literal."""
    values = [*call.args, *(k.value for k in call.keywords)]
    if len(values) != 1 or any(k.arg not in (None, "seed") for k in call.keywords):
        return False
    value = values[0]
    return isinstance(value, ast.Constant) and type(value.value) is int and value.value >= 0


class NameWalker(ast.NodeVisitor):
    """The checks on names, attributes, calls and literals (one pass over the tree)."""

    def __init__(
        self,
        aliases: dict[str, str],
        ctx_name: str,
        task_names: Iterable[str],
        bound: frozenset[str],
    ) -> None:
        self.aliases = aliases
        self.ctx_name = ctx_name
        self.tasks = {t.strip().casefold() for t in task_names if t.strip()}
        self.bound = bound
        self.seeded: set[int] = set()  # ids of numpy.random callees called with a literal seed
        self.class_depth = 0

    def visit_Import(self, node: ast.Import) -> None:
        """Imports were checked on their own."""

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        """Imports were checked on their own."""

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        """Refuse dunder class names; methods may be ``__init__`` / ``__call__``."""
        self._check_definition_name(node.name, node.lineno, method=False)
        self.class_depth += 1
        for stmt in node.body:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self._check_definition_name(stmt.name, stmt.lineno, method=True)
                self._visit_function(stmt)
            else:
                self.visit(stmt)
        self.class_depth -= 1
        for expr in [*node.decorator_list, *node.bases, *node.keywords]:
            self.visit(expr)

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        """Refuse dunder function names outside a class."""
        self._check_definition_name(node.name, node.lineno, method=False)
        self._visit_function(node)

    def visit_AsyncFunctionDef(self, node: ast.AsyncFunctionDef) -> None:
        """As :meth:`visit_FunctionDef`."""
        self._check_definition_name(node.name, node.lineno, method=False)
        self._visit_function(node)

    def _visit_function(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        for arg in ast.walk(node.args):
            if isinstance(arg, ast.arg) and (is_dunder(arg.arg) or arg.arg in FORBIDDEN_NAMES):
                raise ProgramRejected(
                    f"no-external-model: the parameter name '{arg.arg}' at line {node.lineno} "
                    "is not allowed"
                )
        self.generic_visit(node)

    def _check_definition_name(self, name: str, line: int, *, method: bool) -> None:
        if is_dunder(name) and not (method and name in DUNDER_METHODS):
            raise ProgramRejected(
                f"no-external-model: defining '{name}' at line {line} is not allowed (a class "
                f"may define only {', '.join(sorted(DUNDER_METHODS))})"
            )

    def visit_Name(self, node: ast.Name) -> None:
        """Forbidden builtins, dunder names, hash/id, and imported names."""
        name = node.id
        if name in FORBIDDEN_NAMES or is_dunder(name):
            raise ProgramRejected(
                f"no-external-model: use of the name '{name}' at line {node.lineno} is not "
                "allowed (it reaches files, code or namespaces; rename a variable that "
                "shadows it)"
            )
        if name in NONDETERMINISTIC_BUILTINS and name not in self.bound:
            raise ProgramRejected(
                f"deterministic: the builtin '{name}()' at line {node.lineno} is not allowed "
                "(its value changes from run to run)"
            )
        self._check_qualified(node)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        """Attribute names, ctx fields, and qualified names of imported modules."""
        self._check_attribute_name(node)
        if self._check_qualified(node):
            inner = node.value  # the rest of the chain: names only, no re-resolution
            while isinstance(inner, ast.Attribute):
                self._check_attribute_name(inner)
                inner = inner.value
            if isinstance(inner, ast.Name) and (inner.id in FORBIDDEN_NAMES or is_dunder(inner.id)):
                self.visit_Name(inner)
            return
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        """Mark ``numpy.random`` seeding calls with an integer literal as allowed."""
        target = qualified_name(node.func, self.aliases)
        if target in SEEDED_RANDOM_CALLS and _seed_literal(node):
            self.seeded.add(id(node.func))
        self.generic_visit(node)

    def visit_Constant(self, node: ast.Constant) -> None:
        """A string literal must not name a task."""
        if isinstance(node.value, str) and node.value.strip().casefold() in self.tasks:
            raise ProgramRejected(
                f"task-universal: the string literal {node.value!r} at line {node.lineno} is "
                "a task name; a program must not branch on task identity"
            )

    def _check_attribute_name(self, node: ast.Attribute) -> None:
        attr, line = node.attr, node.lineno
        if is_dunder(attr) or attr in INTROSPECTION_ATTRIBUTES or attr in UNSAFE_ATTRIBUTES:
            raise ProgramRejected(
                f"no-external-model: the attribute '.{attr}' at line {line} is not allowed "
                "(no dunder attributes, frame or code introspection, raw memory or file output)"
            )
        if (
            isinstance(node.value, ast.Name)
            and node.value.id == self.ctx_name
            and attr not in CONTEXT_FIELDS
        ):
            raise ProgramRejected(
                f"task-universal: {self.ctx_name}.{attr} at line {line} is not a Context "
                f"field (fields: {', '.join(sorted(CONTEXT_FIELDS))})"
            )

    def _check_qualified(self, node: ast.Name | ast.Attribute) -> bool:
        """Check an imported name's qualified form; return whether it resolved."""
        qualified = qualified_name(node, self.aliases)
        if qualified is None:
            return False
        check_unsafe_name(qualified, node.lineno)
        is_random = qualified == "numpy.random" or qualified.startswith("numpy.random.")
        if is_random and qualified not in RANDOM_TYPES and id(node) not in self.seeded:
            raise ProgramRejected(
                f"deterministic: '{ast.unparse(node)}' at line {node.lineno} is not allowed; "
                "use numpy randomness only through a generator seeded with an integer "
                "literal, e.g. rng = np.random.default_rng(0)"
            )
        return True
