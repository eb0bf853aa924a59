"""The module-level rule (constraint 2, ``global-constants``).

Module level holds only imports, docstrings, constant assignments, function and class
definitions. A constant may call into an allowed module or a few pure builtins
(``np.float32(0.5)``, ``frozenset(...)``, ``re.compile(...)``), never the program's own
functions or classes.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from embedding_ttc.program_files.checks.rules import MODULE_LEVEL_BUILTINS, ProgramRejected


def check_module_level(
    body: list[ast.stmt], aliases: dict[str, str], defined: frozenset[str] | None = None
) -> None:
    """Module (and class) bodies: imports, docstrings, constants and definitions only."""
    if defined is None:
        kinds = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
        defined = frozenset(s.name for s in body if isinstance(s, kinds))
    for stmt in body:
        if isinstance(stmt, (ast.Import, ast.ImportFrom, ast.Pass)):
            continue
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
            continue
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for expr in [*stmt.decorator_list, *stmt.args.defaults, *stmt.args.kw_defaults]:
                if expr is not None:
                    _check_constant(expr, aliases, defined)
            continue
        if isinstance(stmt, ast.ClassDef):
            for expr in [*stmt.decorator_list, *stmt.bases, *(k.value for k in stmt.keywords)]:
                _check_constant(expr, aliases, defined)
            check_module_level(stmt.body, aliases, defined)
            continue
        if isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            _check_assignment(stmt, aliases, defined)
            continue
        raise ProgramRejected(
            f"global-constants: a module-level {type(stmt).__name__} statement at line "
            f"{stmt.lineno} is not allowed (module level holds only imports, constants, "
            "functions and classes)"
        )


def _check_assignment(
    stmt: ast.Assign | ast.AnnAssign | ast.AugAssign,
    aliases: dict[str, str],
    defined: frozenset[str],
) -> None:
    targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
    for target in targets:
        for node in ast.walk(target):
            if isinstance(node, (ast.Attribute, ast.Subscript)):
                raise ProgramRejected(
                    f"global-constants: module-level assignment to an attribute or item at "
                    f"line {stmt.lineno} is not allowed (assign constants to plain names)"
                )
    if stmt.value is not None:
        _check_constant(stmt.value, aliases, defined)


def _calls_outside_lambdas(expr: ast.expr) -> Iterator[ast.Call]:
    stack: list[ast.AST] = [expr]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Lambda):
            continue  # its body runs only when called
        if isinstance(node, ast.Call):
            yield node
        stack.extend(ast.iter_child_nodes(node))


def _check_constant(expr: ast.expr, aliases: dict[str, str], defined: frozenset[str]) -> None:
    """A module-level value: no call of the program's own functions or classes.

    Calls into allowed modules (``np.float32(0.5)``, ``re.compile(...)``), of the pure
    :data:`MODULE_LEVEL_BUILTINS`, and methods of values (``"a b".split()``,
    ``np.random.default_rng(0).random(3)``) are constants; ``make_table()`` is code.
    """
    for call in _calls_outside_lambdas(expr):
        func = call.func
        if isinstance(func, ast.Name):
            ok = func.id in aliases or func.id in MODULE_LEVEL_BUILTINS
        else:
            root: ast.expr = func
            while isinstance(root, (ast.Attribute, ast.Call, ast.Subscript)):
                root = root.func if isinstance(root, ast.Call) else root.value
            ok = not (isinstance(root, ast.Name) and root.id in defined)
        if not ok:
            raise ProgramRejected(
                f"global-constants: the module-level call '{ast.unparse(func)}(...)' at line "
                f"{call.lineno} is not allowed (constants are literals, or calls into allowed "
                "modules)"
            )
