"""Static checks on a program file's source: early rejections whose reason names the constraint.

These checks are **not** a sandbox. Python offers too many ways around a syntactic rule
(``type(x).__subclasses__()``, frames reached through tracebacks, memory-unsafe numpy views);
what contains a program is the separate process of :mod:`embedding_ttc.program_files.sandbox`
and the limits its child sets on itself. The checks exist so that a program that breaks a
constraint is rejected before it runs, with a reason a proposer can act on. Every reason is one
sentence
that starts with the constraint's name (:data:`~embedding_ttc.program_files.contract.CONSTRAINTS`),
or with ``interface`` when the file breaks the program-file contract itself::

    no-external-model: import of 'os' at line 1 is not allowed (allowed: numpy, math, ...)

The rules, in the order they are checked (their tables are in
:mod:`~embedding_ttc.program_files.checks.rules`):

* ``interface`` (this module): the source is UTF-8 text of at most ``MAX_SOURCE_BYTES``,
  parses, and defines one top-level ``def program(Q, D, S, ctx)`` with exactly four
  positional parameters.
* ``no-external-model`` / ``deterministic`` (imports,
  :mod:`~embedding_ttc.program_files.checks.imports`): only ``ALLOWED_MODULES``; a plain entry such
  as ``numpy`` admits its submodules too (``numpy.linalg``, ``collections.abc``), as an entry
  ending in ``.*`` does; no relative or star import, no private module (``numpy._core``).
  Importing ``random``, ``time``, ``datetime``, ``uuid`` or ``secrets`` is reported as a
  ``deterministic`` violation.
* ``global-constants`` (:mod:`~embedding_ttc.program_files.checks.module_level`): module level holds
  only imports, docstrings, constant assignments, function and class definitions. A constant
  may call into an allowed module or a few pure builtins (``np.float32(0.5)``,
  ``frozenset(...)``, ``re.compile(...)``).
* ``no-external-model`` (names, :mod:`~embedding_ttc.program_files.checks.names`): no
  ``FORBIDDEN_NAMES``, no dunder name or attribute (except defining ``__init__`` /
  ``__call__`` in a class), no frame or code introspection attribute, no numpy file access,
  ``ctypes`` or ``as_strided``.
* ``task-universal`` (names): ``ctx`` is used only through ``CONTEXT_FIELDS``; no string
  literal equals (case-folded) the name of a task.
* ``deterministic`` (names): ``numpy.random`` only through a generator seeded with an integer
  literal (``np.random.default_rng(0)``); no ``hash()`` or ``id()``.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from dataclasses import dataclass

from embedding_ttc.program_files.checks.imports import check_imports, import_aliases
from embedding_ttc.program_files.checks.module_level import check_module_level
from embedding_ttc.program_files.checks.names import NameWalker, bound_names
from embedding_ttc.program_files.checks.rules import MAX_SOURCE_BYTES, ProgramRejected
from embedding_ttc.program_files.contract import PROGRAM_FUNCTION


@dataclass(frozen=True)
class ParsedProgram:
    """A program file that passed the static checks, with its syntax tree."""

    source: str
    tree: ast.Module


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
        check_imports(tree)
        check_module_level(tree.body, aliases)
        NameWalker(aliases, ctx_name, task_names, bound_names(tree)).visit(tree)
    except RecursionError:
        raise ProgramRejected("interface: the source is nested too deeply to check") from None
    return ParsedProgram(source, tree)


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
