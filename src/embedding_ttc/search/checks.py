"""Static checks on a program file's source: early rejections whose reason names the constraint.

These checks are **not** a sandbox. Python offers too many ways around a syntactic rule
(``type(x).__subclasses__()``, frames reached through tracebacks, memory-unsafe numpy views);
what contains a program is the separate process of :mod:`embedding_ttc.search.sandbox` and the
limits its child sets on itself. The checks exist so that a program that breaks a constraint
is rejected before it runs, with a reason a proposer can act on. Every reason is one sentence
that starts with the constraint's name (:data:`~embedding_ttc.search.interface.CONSTRAINTS`),
or with ``interface`` when the file breaks the program-file contract itself::

    no-external-model: import of 'os' at line 1 is not allowed (allowed: numpy, math, ...)

The rules, in the order they are checked:

* ``interface``: the source is UTF-8 text of at most :data:`MAX_SOURCE_BYTES`, parses, and
  defines one top-level ``def program(Q, D, S, ctx)`` with exactly four positional parameters.
* ``no-external-model`` / ``deterministic`` (imports): only :data:`ALLOWED_MODULES`; a plain
  entry such as ``numpy`` admits its submodules too (``numpy.linalg``, ``collections.abc``),
  as an entry ending in ``.*`` does; no relative or star import, no private module
  (``numpy._core``). Importing ``random``, ``time``, ``datetime``, ``uuid`` or ``secrets`` is
  reported as a ``deterministic`` violation.
* ``global-constants``: module level holds only imports, docstrings, constant assignments,
  function and class definitions. A constant may call into an allowed module or a few pure
  builtins (``np.float32(0.5)``, ``frozenset(...)``, ``re.compile(...)``).
* ``no-external-model`` (names): no :data:`FORBIDDEN_NAMES`, no dunder name or attribute
  (except defining ``__init__`` / ``__call__`` in a class), no frame or code introspection
  attribute, no numpy file access, ``ctypes`` or ``as_strided``.
* ``task-universal``: ``ctx`` is used only through :data:`CONTEXT_FIELDS`; no string literal
  equals (case-folded) the name of a task.
* ``deterministic``: ``numpy.random`` only through a generator seeded with an integer literal
  (``np.random.default_rng(0)``); no ``hash()`` or ``id()``.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from embedding_ttc.search.interface import (
    ALLOWED_MODULES,
    PROGRAM_FUNCTION,
    CandidateError,
    Status,
)

MAX_SOURCE_BYTES = 100_000
"""The largest program file accepted, in UTF-8 bytes."""

CONTEXT_FIELDS: frozenset[str] = frozenset(
    {
        "encode_fn",
        "query_texts",
        "doc_texts",
        "query_ids",
        "doc_ids",
        "candidates",
        "views_collapsed",
        "index_time",
        "doc_lengths",
    }
)
"""The attributes of :class:`~embedding_ttc.programs.base.Context` a program may read."""

DEPLOY_ONLY_FIELDS: frozenset[str] = frozenset({"scored_rows"})
"""Context fields a searched program does not see: deployment hints for library programs.

A searched program is evaluated on whole query batches, where ``scored_rows`` is always
``None``; the sandbox's context does not carry it.
"""

FORBIDDEN_NAMES: frozenset[str] = frozenset(
    {
        "open",
        "exec",
        "eval",
        "compile",
        "__import__",
        "globals",
        "locals",
        "vars",
        "getattr",
        "setattr",
        "delattr",
        "input",
        "breakpoint",
        "help",
        "exit",
        "quit",
        "memoryview",
        "__builtins__",
    }
)
"""Builtins that reach files, code, namespaces or the terminal (any use of the name is refused)."""

NONDETERMINISTIC_BUILTINS: frozenset[str] = frozenset({"hash", "id"})
"""Builtins whose value changes from run to run (refused unless the program binds the name)."""

NONDETERMINISTIC_MODULES: frozenset[str] = frozenset(
    {"random", "time", "datetime", "uuid", "secrets"}
)
"""Modules whose import is reported as a ``deterministic`` violation."""

SEEDED_RANDOM_CALLS: frozenset[str] = frozenset(
    {
        "numpy.random.default_rng",
        "numpy.random.seed",
        "numpy.random.PCG64",
        "numpy.random.PCG64DXSM",
        "numpy.random.Philox",
        "numpy.random.SFC64",
        "numpy.random.MT19937",
    }
)
"""``numpy.random`` callables allowed when called with one integer literal (the seed)."""

RANDOM_TYPES: frozenset[str] = frozenset({"numpy.random.Generator", "numpy.random.BitGenerator"})
"""``numpy.random`` names allowed anywhere (types: a generator needs a seeded bit generator)."""

INTROSPECTION_ATTRIBUTES: frozenset[str] = frozenset(
    {
        "gi_frame",
        "gi_code",
        "gi_yieldfrom",
        "cr_frame",
        "cr_code",
        "cr_await",
        "ag_frame",
        "ag_code",
        "ag_await",
        "f_back",
        "f_builtins",
        "f_code",
        "f_globals",
        "f_locals",
        "f_trace",
        "tb_frame",
        "tb_next",
        "co_code",
        "co_consts",
        "co_names",
    }
)
"""Attributes that reach frames and code objects (the classic ways out of a namespace)."""

UNSAFE_ATTRIBUTES: frozenset[str] = frozenset(
    {"tofile", "dump", "ctypes", "ctypeslib", "as_strided"}
)
"""Attribute names refused on any object: array file output, raw pointers, unchecked strides."""

NUMPY_UNSAFE: frozenset[str] = frozenset(
    {
        "numpy.load",
        "numpy.save",
        "numpy.savez",
        "numpy.savez_compressed",
        "numpy.savetxt",
        "numpy.loadtxt",
        "numpy.genfromtxt",
        "numpy.fromfile",
        "numpy.fromregex",
        "numpy.memmap",
        "numpy.DataSource",
        "numpy.ctypeslib",
        "numpy.f2py",
        "numpy.testing",
        "numpy.distutils",
        "numpy.lib.format",
        "numpy.lib.npyio",
        "numpy.lib.stride_tricks.as_strided",
    }
)
"""numpy names (and their members) that read or write files or bypass memory safety."""

TEST_SEGMENTS: frozenset[str] = frozenset({"tests", "testing", "conftest"})
"""Module name parts of test suites shipped inside packages (they import pytest, subprocess)."""

MODULE_LEVEL_BUILTINS: frozenset[str] = frozenset(
    {
        "frozenset",
        "set",
        "tuple",
        "list",
        "dict",
        "range",
        "int",
        "float",
        "str",
        "bool",
        "complex",
        "len",
        "min",
        "max",
        "abs",
        "round",
        "sum",
        "sorted",
        "zip",
        "enumerate",
        "reversed",
    }
)
"""Pure builtins a module-level constant may call (``STOP = frozenset({...})``)."""

DUNDER_METHODS: frozenset[str] = frozenset({"__init__", "__call__"})
"""Dunder methods a class in a program may define."""


class ProgramRejected(CandidateError):
    """A program file broke a constraint (status ``rejected``); ``reason`` starts with its name."""

    def __init__(self, reason: str) -> None:
        super().__init__(Status.REJECTED, reason)

    def __str__(self) -> str:  # the reason already names the constraint
        return self.reason

    @property
    def constraint(self) -> str:
        """The constraint named at the start of the reason (``no-external-model``, ...)."""
        return self.reason.split(":", 1)[0]


@dataclass(frozen=True)
class ParsedProgram:
    """A program file that passed the static checks, with its syntax tree."""

    source: str
    tree: ast.Module


def module_allowed(name: str) -> bool:
    """Whether ``import name`` is admitted by :data:`ALLOWED_MODULES` (submodules included)."""
    for entry in ALLOWED_MODULES:
        base = entry.removesuffix(".*")
        if name == base or name.startswith(base + "."):
            return True
    return False


def check_source(source: str, *, task_names: Iterable[str] = ()) -> ParsedProgram:
    """Run every static check on a program file's source.

    Args:
        source: the program file's text.
        task_names: names of the tasks the program may be evaluated on; a string literal
            equal to one of them (case-folded) is a ``task-universal`` violation.

    Returns:
        The source with its syntax tree.

    Raises:
        ProgramRejected: the first check that failed, its reason naming the constraint.

    """
    tree = _parse(source)
    ctx_name = _check_interface(tree)
    aliases = import_aliases(tree)
    try:
        _check_imports(tree)
        _check_module_level(tree.body, aliases)
        _Walker(aliases, ctx_name, task_names, _bound_names(tree)).visit(tree)
    except RecursionError:
        raise ProgramRejected("interface: the source is nested too deeply to check") from None
    return ParsedProgram(source, tree)


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


def _parse(source: str) -> ast.Module:
    try:
        size = len(source.encode("utf-8"))
    except UnicodeEncodeError:
        raise ProgramRejected("interface: the source is not valid UTF-8 text") from None
    if size > MAX_SOURCE_BYTES:
        raise ProgramRejected(
            f"interface: the source is {size} bytes, more than the limit of {MAX_SOURCE_BYTES}"
        )
    try:
        return ast.parse(source, filename="<program>")
    except SyntaxError as exc:
        raise ProgramRejected(f"interface: syntax error at line {exc.lineno}: {exc.msg}") from None
    except (ValueError, RecursionError, MemoryError) as exc:  # NUL bytes, absurd nesting
        raise ProgramRejected(f"interface: the source cannot be parsed ({exc})") from None


def _binds(stmt: ast.stmt, name: str) -> bool:
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return stmt.name == name
    if isinstance(stmt, (ast.Import, ast.ImportFrom)):
        return any((a.asname or a.name.split(".")[0]) == name for a in stmt.names)
    targets: list[ast.expr] = []
    if isinstance(stmt, ast.Assign):
        targets = stmt.targets
    elif isinstance(stmt, (ast.AnnAssign, ast.AugAssign)):
        targets = [stmt.target]
    return any(isinstance(n, ast.Name) and n.id == name for t in targets for n in ast.walk(t))


def _check_interface(tree: ast.Module) -> str:
    """Check the ``program`` definition; return the name of its fourth parameter (``ctx``)."""
    defs = [s for s in tree.body if _binds(s, PROGRAM_FUNCTION)]
    signature = f"{PROGRAM_FUNCTION}(Q, D, S, ctx)"
    if not defs:
        raise ProgramRejected(f"interface: the file defines no top-level function {signature}")
    if len(defs) > 1:
        lines = ", ".join(str(d.lineno) for d in defs)
        raise ProgramRejected(
            f"interface: '{PROGRAM_FUNCTION}' is bound {len(defs)} times at top level "
            f"(lines {lines}); define it once"
        )
    node = defs[0]
    if not isinstance(node, ast.FunctionDef):
        raise ProgramRejected(
            f"interface: '{PROGRAM_FUNCTION}' at line {node.lineno} must be a plain "
            f"'def {signature}'"
        )
    args = node.args
    positional = [*args.posonlyargs, *args.args]
    if len(positional) != 4 or args.vararg or args.kwarg or args.kwonlyargs:
        got = ", ".join(a.arg for a in positional) or "no positional parameters"
        raise ProgramRejected(
            f"interface: {PROGRAM_FUNCTION} must take exactly four positional parameters "
            f"(Q, D, S, ctx), and nothing else; it takes ({got})"
        )
    return positional[3].arg


def _check_imports(tree: ast.Module) -> None:
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
        _check_unsafe_name(f"{module}.{alias.name}", node.lineno)


def _check_alias(alias: ast.alias, line: int) -> None:
    bound = alias.asname or alias.name
    if _is_dunder(bound) or bound in FORBIDDEN_NAMES:
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
    _check_unsafe_name(name, line)


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


def _check_unsafe_name(qualified: str, line: int) -> None:
    why = unsafe_name(qualified)
    if why is not None:
        raise ProgramRejected(f"no-external-model: '{qualified}' at line {line} {why}")


def _check_module_level(
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
            _check_module_level(stmt.body, aliases, defined)
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


def _bound_names(tree: ast.Module) -> frozenset[str]:
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


def _is_dunder(name: str) -> bool:
    return len(name) > 4 and name.startswith("__") and name.endswith("__")


def _seed_literal(call: ast.Call) -> bool:
    """Whether a call has exactly one argument, a non-negative integer literal."""
    values = [*call.args, *(k.value for k in call.keywords)]
    if len(values) != 1 or any(k.arg not in (None, "seed") for k in call.keywords):
        return False
    value = values[0]
    return isinstance(value, ast.Constant) and type(value.value) is int and value.value >= 0


class _Walker(ast.NodeVisitor):
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
            if isinstance(arg, ast.arg) and (_is_dunder(arg.arg) or arg.arg in FORBIDDEN_NAMES):
                raise ProgramRejected(
                    f"no-external-model: the parameter name '{arg.arg}' at line {node.lineno} "
                    "is not allowed"
                )
        self.generic_visit(node)

    def _check_definition_name(self, name: str, line: int, *, method: bool) -> None:
        if _is_dunder(name) and not (method and name in DUNDER_METHODS):
            raise ProgramRejected(
                f"no-external-model: defining '{name}' at line {line} is not allowed (a class "
                f"may define only {', '.join(sorted(DUNDER_METHODS))})"
            )

    def visit_Name(self, node: ast.Name) -> None:
        """Forbidden builtins, dunder names, hash/id, and imported names."""
        name = node.id
        if name in FORBIDDEN_NAMES or _is_dunder(name):
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
            if isinstance(inner, ast.Name) and (
                inner.id in FORBIDDEN_NAMES or _is_dunder(inner.id)
            ):
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
        if _is_dunder(attr) or attr in INTROSPECTION_ATTRIBUTES or attr in UNSAFE_ATTRIBUTES:
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
        _check_unsafe_name(qualified, node.lineno)
        is_random = qualified == "numpy.random" or qualified.startswith("numpy.random.")
        if is_random and qualified not in RANDOM_TYPES and id(node) not in self.seeded:
            raise ProgramRejected(
                f"deterministic: '{ast.unparse(node)}' at line {node.lineno} is not allowed; "
                "use numpy randomness only through a generator seeded with an integer "
                "literal, e.g. rng = np.random.default_rng(0)"
            )
        return True
