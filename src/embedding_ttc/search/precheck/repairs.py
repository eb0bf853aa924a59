"""Mechanical repairs of a drafted program: common small-model slips fixed without a model call.

Each repair takes a source and returns the repaired source with one note per change (the
source unchanged and no notes when there is nothing to fix, or when it does not parse):

* :func:`close_docstring`: a module docstring left open is closed before the first code line;
* :func:`move_into_program`: module-level uses of ``program``'s arguments move into it;
* :func:`drop_unused_typing`: an unused ``typing`` import (refused by the import allow-list) goes;
* :func:`fix_imports`: helpers imported from the wrong primitives module, or used without an
  import, are imported from their own;
* :func:`hoist_assignments`: a one-line assignment inside ``program`` that reads only its
  arguments and module-level names (``mask = mask_for(ctx, S)``), read by an earlier line,
  moves up to the start of the body (an edit that adds a channel at the top of ``program``
  often uses ``mask`` before the line that makes it);
* :func:`drop_rrf_weights`: a list of weights given to ``rrf`` as its second argument (it
  takes no weights; ``fuse`` does, and ignores them for rank fusion) goes;
* :func:`~embedding_ttc.search.precheck.mask_keyword.name_mask`: a mask passed to ``rrf`` or
  ``fuse`` by position (they take it by keyword only) is passed by keyword;
* :func:`define_constants`: an UPPER_CASE constant read but never defined gets the value an
  earlier draft of the same conversation, or a worked example of the prompt, gave it.

:func:`repair_source` applies them in that order.
"""

from __future__ import annotations

import ast
import builtins
import importlib
import re
from collections.abc import Iterable

from embedding_ttc.search.precheck.mask_keyword import name_mask
from embedding_ttc.search.precheck.names import bound_names
from embedding_ttc.search.prompts.helper_list import helper_modules
from embedding_ttc.search.prompts.primitives import PRIMITIVE_PACKAGE

__all__ = [
    "ARGUMENTS",
    "close_docstring",
    "define_constants",
    "drop_rrf_weights",
    "drop_unused_typing",
    "fix_imports",
    "hoist_assignments",
    "move_into_program",
    "repair_source",
]


_CODE_LINE = re.compile(r"^(import |from |def |class |@|[A-Za-z_]\w*\s*(:[^=]*)?=[^=])")


def close_docstring(source: str) -> tuple[str, tuple[str, ...]]:
    """Close a module docstring the model opened and never closed; say what changed.

    A small model often writes ``\"\"\"Novelty: ...`` and ``Hypothesis: ...`` and goes
    straight on to the imports. When the source does not parse for that reason and starts
    with a triple quote, the quote is closed at the end of the last non-blank line before the
    first line that reads as code (an import, a ``def``, an assignment); the result is kept
    only if it parses. The same is done when the docstring was closed only after the code, so
    that the whole program is a string (the module defines no ``program`` and its docstring
    holds ``def program(``): that late closing quote is removed.
    """
    quote = source.lstrip()[:3]
    if quote not in ('"""', "'''"):
        return source, ()
    lines = source.split("\n")
    try:
        tree = ast.parse(source)
    except SyntaxError as exc:
        if "triple-quoted" not in str(exc.msg):
            return source, ()
    else:
        # It parses: repair only a docstring that swallowed the program (closed at the end).
        if not tree.body or _defines_program(tree):
            return source, ()
        doc = tree.body[0]
        closing = (doc.end_lineno or doc.lineno) - 1
        if not (
            isinstance(doc, ast.Expr)
            and isinstance(doc.value, ast.Constant)
            and "def program(" in str(doc.value.value)
            and lines[closing].rstrip().endswith(quote)
        ):
            return source, ()
        lines[closing] = lines[closing].rstrip()[: -len(quote)]
    first = next(i for i, line in enumerate(lines) if line.strip())
    code = next((i for i in range(first + 1, len(lines)) if _CODE_LINE.match(lines[i])), len(lines))
    end = max(i for i in range(first, code) if lines[i].strip())
    lines[end] = lines[end].rstrip() + quote
    repaired = "\n".join(lines)
    try:
        ast.parse(repaired)
    except SyntaxError:
        return source, ()
    return repaired, (f"closed the module docstring after line {end + 1}",)


def _defines_program(tree: ast.Module) -> bool:
    return any(isinstance(n, ast.FunctionDef) and n.name == "program" for n in tree.body)


def _with_program(source: str) -> tuple[ast.Module, ast.FunctionDef] | None:
    """The parsed module and its top-level ``program`` with a body (``None``: no such)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    program = next(
        (n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "program"), None
    )
    if program is None or not program.body:
        return None
    return tree, program


ARGUMENTS = ("Q", "D", "S", "ctx", "mask")
"""Names that exist only inside ``program``: its arguments and the customary candidate mask."""


def move_into_program(source: str) -> tuple[str, tuple[str, ...]]:
    """Move module-level statements that use ``program``'s arguments into its body.

    A small model often computes a channel at module level (``P = prefix_scores(Q, D, 64)``)
    and uses it inside ``program``, which fails with ``NameError: name 'Q'``. Each such
    top-level assignment or expression is moved, in order, into ``program`` just before the
    first statement of its body that reads a name the moved lines bind (else at the start of
    the body, after a docstring). A source that does not parse, or has no top-level
    ``program``, is returned unchanged; so is the result if it does not parse.
    """
    parsed = _with_program(source)
    if parsed is None:
        return source, ()
    tree, program = parsed
    moved: list[ast.stmt] = []
    bound: set[str] = set()
    for n in tree.body:  # in order: a statement that reads a moved name moves too
        if not isinstance(n, (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Expr)):
            continue
        if isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant):
            continue
        names = [x for x in ast.walk(n) if isinstance(x, ast.Name)]
        if any(x.id in ARGUMENTS or (x.id in bound and isinstance(x.ctx, ast.Load)) for x in names):
            moved.append(n)
            bound.update(x.id for x in names if isinstance(x.ctx, ast.Store))
    if not moved:
        return source, ()
    body = program.body
    start = 1 if isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) else 0
    at = next(
        (
            stmt
            for stmt in body[start:]
            if any(isinstance(x, ast.Name) and x.id in bound for x in ast.walk(stmt))
        ),
        body[start] if start < len(body) else None,
    )
    if at is None:
        return source, ()
    lines = source.split("\n")
    indent = re.match(r"\s*", lines[at.lineno - 1]).group(0)  # type: ignore[union-attr]
    block = [
        indent + line.strip()
        for n in moved
        for line in lines[n.lineno - 1 : (n.end_lineno or n.lineno)]
    ]
    target = at.lineno - 1
    for n in reversed(moved):  # bottom-up, so earlier line numbers stay valid
        del lines[n.lineno - 1 : (n.end_lineno or n.lineno)]
        if n.lineno - 1 < target:
            target -= (n.end_lineno or n.lineno) - n.lineno + 1
    lines[target:target] = block
    repaired = "\n".join(lines)
    try:
        ast.parse(repaired)
    except SyntaxError:
        return source, ()
    what = ", ".join(sorted(bound)) or "an expression"
    return repaired, (f"moved the module-level computation of {what} into program()",)


def drop_unused_typing(source: str) -> tuple[str, tuple[str, ...]]:
    """Remove ``typing`` imports whose names the program never uses; say what changed.

    A small model often opens with ``from typing import *``, which the import allow-list
    rejects. Such an import is dropped when no name of ``typing`` is read anywhere in the
    program; an import of a name that is used stays (and the check reports it).
    """
    import typing

    try:
        tree = ast.parse(source)
    except SyntaxError:
        return source, ()
    loads = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    attrs = {
        n.value.id
        for n in ast.walk(tree)
        if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name)
    }
    drop: list[ast.stmt] = []
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module == "typing" and node.level == 0:
            names = {a.asname or a.name for a in node.names}
            if "*" in names:
                names = {n for n in dir(typing) if not n.startswith("_")}
            if not names & loads:
                drop.append(node)
        elif (
            isinstance(node, ast.Import)
            and all(a.name == "typing" for a in node.names)
            and not {a.asname or a.name for a in node.names} & (loads | attrs)
        ):
            drop.append(node)
    if not drop:
        return source, ()
    lines = source.split("\n")
    for node in reversed(drop):
        del lines[node.lineno - 1 : (node.end_lineno or node.lineno)]
    return "\n".join(lines), ("dropped an unused typing import",)


def fix_imports(source: str) -> tuple[str, tuple[str, ...]]:
    """Repair a program's helper imports without asking the model; say what changed.

    * ``from embedding_ttc.programs.primitives.scores import maxsim``: ``maxsim`` lives in
      ``late``, so it is imported from there (names the module does have stay);
    * a helper used but never bound (``zscore_rows(S)`` without an import) is imported from
      its module; ``np`` used without ``import numpy as np`` gets that import.

    A source that does not parse is returned unchanged (the check reports it).

    Returns:
        The repaired source and one note per change (empty when nothing changed).

    """
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return source, ()
    modules = helper_modules()
    lines = source.split("\n")
    notes: list[str] = []
    for node in reversed(tree.body):  # bottom-up, so earlier line numbers stay valid
        module = _primitives_module(node)
        if module is None or not isinstance(node, ast.ImportFrom):
            continue
        replacement = _regroup(node, module, modules, notes)
        if replacement is not None:
            lines[node.lineno - 1 : node.end_lineno] = replacement
    bound = _bound_names(tree)
    used = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    additions: list[str] = []
    if "np" in used and "np" not in bound:
        additions.append("import numpy as np")
        notes.append("added: import numpy as np")
    missing: dict[str, list[str]] = {}
    for name in sorted(used - bound):
        if name in modules:
            missing.setdefault(modules[name], []).append(name)
    for module, names in missing.items():
        additions.append(f"from {PRIMITIVE_PACKAGE}.{module} import {', '.join(names)}")
        notes.append(f"added: {additions[-1]}")
    if additions:
        at = _header_end(tree)
        lines[at:at] = additions
    if not notes:
        return source, ()
    return "\n".join(lines), tuple(notes)


def _primitives_module(node: ast.stmt) -> str | None:
    """The module of a top-level ``from embedding_ttc.programs.primitives.<module> import ...``."""
    if (
        isinstance(node, ast.ImportFrom)
        and node.level == 0
        and node.module is not None
        and node.module.startswith(PRIMITIVE_PACKAGE + ".")
    ):
        return node.module
    return None


def _regroup(
    node: ast.ImportFrom, module: str, modules: dict[str, str], notes: list[str]
) -> list[str] | None:
    """The import split by the module each name really comes from, or ``None`` if it is fine."""
    short = module.removeprefix(PRIMITIVE_PACKAGE + ".")
    try:
        have = importlib.import_module(module)
    except ImportError:
        have = None
    groups: dict[str, list[str]] = {}
    moved = False
    for alias in node.names:
        target = modules.get(alias.name)
        if (have is None or not hasattr(have, alias.name)) and target is not None:
            notes.append(f"{alias.name} is imported from {PRIMITIVE_PACKAGE}.{target}")
            moved = True
        else:
            target = short
        text = alias.name + (f" as {alias.asname}" if alias.asname else "")
        groups.setdefault(target, []).append(text)
    if not moved:
        return None
    return [f"from {PRIMITIVE_PACKAGE}.{m} import {', '.join(n)}" for m, n in groups.items()]


def _bound_names(tree: ast.Module) -> set[str]:
    """Every name the module binds anywhere, and the builtins."""
    return set(dir(builtins)) | bound_names(tree)


def _header_end(tree: ast.Module) -> int:
    """The line after the module docstring and any ``__future__`` import (0-based index)."""
    end = 0
    for i, node in enumerate(tree.body):
        docstring = (
            i == 0
            and isinstance(node, ast.Expr)
            and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)
        )
        future = isinstance(node, ast.ImportFrom) and node.module == "__future__"
        if not (docstring or future):
            break
        end = node.end_lineno or end
    return end


_CONSTANT = re.compile(r"^[A-Z][A-Z0-9_]*$")


def define_constants(source: str, donors: Iterable[str]) -> tuple[str, tuple[str, ...]]:
    """Define UPPER_CASE constants the program reads but never binds, from donor sources.

    A repair turn of the 1.5B model often returns only ``program`` and drops the constants
    the first draft defined above it (``NameError: name 'ALPHA' is not defined``), and fresh
    drafts reuse the worked examples' names (``W_S``, ``K``) without defining them. Each
    such name gets the first literal module-level assignment of it found in ``donors`` (in
    order: earlier drafts of the conversation, then the prompt's examples), inserted after
    the imports. A name no donor defines is left for the check to report.
    """
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return source, ()
    bound = _bound_names(tree)
    wanted = sorted(
        {
            n.id
            for n in ast.walk(tree)
            if isinstance(n, ast.Name)
            and isinstance(n.ctx, ast.Load)
            and _CONSTANT.match(n.id)
            and n.id not in bound
        }
    )
    if not wanted:
        return source, ()
    found: dict[str, str] = {}
    for donor in donors:
        for name, text in _literal_constants(donor).items():
            if name in wanted:
                found.setdefault(name, text)
    if not found:
        return source, ()
    lines = source.split("\n")
    imports = [n for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))]
    at = max([n.end_lineno or n.lineno for n in imports], default=_header_end(tree))
    block = [f"{name} = {found[name]}" for name in wanted if name in found]
    lines[at:at] = ["", *block]
    return "\n".join(lines), tuple(f"defined {line} as before" for line in block)


def _literal_constants(source: str) -> dict[str, str]:
    """``NAME -> value text`` of the module-level ``NAME = <literal>`` assignments."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return {}
    out: dict[str, str] = {}
    for node in tree.body:
        if (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and _CONSTANT.match(node.targets[0].id)
        ):
            try:
                ast.literal_eval(node.value)
            except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
                continue
            out.setdefault(node.targets[0].id, ast.unparse(node.value))
    return out


def _module_level_names(tree: ast.Module) -> set[str]:
    """The builtins and the names the module binds at its top level (not inside functions)."""
    names = set(dir(builtins))
    for top in tree.body:
        if isinstance(top, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in top.names)
        elif isinstance(top, (ast.FunctionDef, ast.ClassDef)):
            names.add(top.name)
        elif isinstance(top, (ast.Assign, ast.AnnAssign)):
            targets = top.targets if isinstance(top, ast.Assign) else [top.target]
            names.update(n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name))
    return names


def _uses(statements: Iterable[ast.stmt], name: str, context: type) -> bool:
    """Whether ``name`` is read (``ast.Load``) or bound (``ast.Store``) in ``statements``."""
    return any(
        isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, context)
        for stmt in statements
        for n in ast.walk(stmt)
    )


def _hoistable(body: list[ast.stmt], start: int, free: set[str]) -> list[tuple[ast.Assign, str]]:
    """The assignments of ``body`` to move up, with their names.

    Each is a one-line ``name = expr`` reading only ``free`` names (and those hoisted before
    it), whose name an earlier statement reads and none binds.
    """
    out: list[tuple[ast.Assign, str]] = []
    for i, node in enumerate(body[start:], start):
        if not (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and node.lineno == node.end_lineno
        ):
            continue
        name = node.targets[0].id
        reads = {n.id for n in ast.walk(node.value) if isinstance(n, ast.Name)}
        earlier = body[start:i]
        if (
            reads <= free | {h for _, h in out}
            and _uses(earlier, name, ast.Load)
            and not _uses(earlier, name, ast.Store)
        ):
            out.append((node, name))
    return out


def hoist_assignments(source: str) -> tuple[str, tuple[str, ...]]:
    """Move up assignments in ``program`` that earlier lines read; say which (see the module)."""
    parsed = _with_program(source)
    if parsed is None:
        return source, ()
    tree, program = parsed
    body = program.body
    docstring = isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
    start = 1 if docstring else 0
    free = _module_level_names(tree) | {a.arg for a in program.args.args}
    hoisted = _hoistable(body, start, free) if start < len(body) else []
    if not hoisted:
        return source, ()
    lines = source.split("\n")
    moved = [lines[node.lineno - 1].strip() for node, _ in hoisted]
    indent = " " * body[start].col_offset
    for node, _ in sorted(hoisted, key=lambda h: -h[0].lineno):
        del lines[node.lineno - 1]
    at = body[start].lineno - 1
    lines[at:at] = [indent + line for line in moved]
    repaired = "\n".join(lines)
    try:
        ast.parse(repaired)
    except SyntaxError:
        return source, ()
    names = ", ".join(name for _, name in hoisted)
    return repaired, (f"moved the assignment of {names} to the start of program()",)


def _weights_argument(node: ast.expr) -> bool:
    """A list or tuple literal of numbers, or a name that says it holds weights."""
    if isinstance(node, ast.List | ast.Tuple):
        return all(
            isinstance(e, ast.Constant) and isinstance(e.value, int | float) for e in node.elts
        )
    return isinstance(node, ast.Name) and "weight" in node.id.lower()


def _rrf_calls_with_weights(tree: ast.Module) -> list[ast.Call]:
    calls = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or len(node.args) < 2:
            continue
        func = node.func
        name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
        if name == "rrf" and _weights_argument(node.args[1]):
            calls.append(node)
    return calls


def drop_rrf_weights(source: str) -> tuple[str, tuple[str, ...]]:
    """Drop the weights a call of ``rrf`` gets as its second argument (see the module)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return source, ()
    calls = _rrf_calls_with_weights(tree)
    if not calls:
        return source, ()
    lines = source.split("\n")
    notes = []
    for call in sorted(calls, key=lambda c: (-c.lineno, -c.col_offset)):
        dropped = ast.unparse(call.args[1])
        call.args = [call.args[0], *call.args[2:]]
        end_line = call.end_lineno or call.lineno
        first, last = lines[call.lineno - 1].encode(), lines[end_line - 1].encode()
        end_col = call.end_col_offset if call.end_col_offset is not None else len(last)
        # AST offsets count UTF-8 bytes, not characters.
        head, tail = first[: call.col_offset].decode(), last[end_col:].decode()
        lines[call.lineno - 1 : end_line] = [head + ast.unparse(call) + tail]
        notes.append(f"dropped the weights {dropped} given to rrf, which takes no weights")
    repaired = "\n".join(lines)
    try:
        ast.parse(repaired)
    except SyntaxError:
        return source, ()
    return repaired, tuple(reversed(notes))


def repair_source(source: str, donors: Iterable[str] = ()) -> tuple[str, tuple[str, ...]]:
    """Every mechanical repair in turn; the repaired source and all notes."""
    notes: list[str] = []
    for repair in (
        close_docstring,
        move_into_program,
        drop_unused_typing,
        fix_imports,
        hoist_assignments,
        drop_rrf_weights,
        name_mask,
    ):
        source, more = repair(source)
        notes.extend(more)
    source, more = define_constants(source, donors)
    notes.extend(more)
    return source, tuple(notes)
