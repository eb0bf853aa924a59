"""Pass the candidate mask of ``rrf`` and ``fuse`` by keyword: the rewrite of a positional call.

``rrf(channels, *, mask, k, ties)`` and ``fuse(channels, weights, *, mask, method)`` take
the mask by keyword only, because a positional second argument meant the mask to one and the
weights to the other (a small model wrote ``rrf(channels, weights, mask)`` often enough). A
source written before that, or by a model that still passes it by position, calls
``rrf(channels, mask, k=RRF_K)``; :func:`name_mask` rewrites each such call to
``rrf(channels, mask=mask, k=RRF_K)`` by inserting the parameter names in front of the
positional arguments and changes no other byte, so comments and layout stay.

Only calls that reach the primitives are rewritten: a name imported from
``embedding_ttc.programs.primitives`` (or one of its modules), under its own name or an alias,
or an attribute of such a module (``scores.rrf(...)``); a source that binds the name itself
(``def rrf``, ``rrf = ...``) keeps its calls. The rewrite is checked: the new source must
parse to the tree of the old one with those arguments moved to keywords, or nothing changes.

The search's repairs apply it to drafted programs
(:func:`~embedding_ttc.search.precheck.repairs.repair_source`), and
``scripts/migrate_mask_keyword.py`` applied it once to the committed program files.
"""

from __future__ import annotations

import ast

from embedding_ttc.search.precheck.names import bound_names
from embedding_ttc.search.prompts.primitives import PRIMITIVE_PACKAGE

__all__ = ["KEYWORD_AFTER", "name_mask"]


KEYWORD_AFTER: dict[str, tuple[int, tuple[str, ...]]] = {
    "rrf": (1, ("mask", "k", "ties")),
    "fuse": (2, ("mask", "method")),
}
"""For each primitive: how many arguments it takes by position, and the keyword-only names
of the positional arguments an older call gave after those, in order."""


def name_mask(source: str) -> tuple[str, tuple[str, ...]]:
    """Name the positional mask (and what follows it) in every call of ``rrf`` and ``fuse``.

    Returns:
        The rewritten source and one note per call rewritten; the source unchanged and no
        notes when no call passes the mask by position, when it does not parse, or when the
        rewrite would change anything but those arguments.

    """
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return source, ()
    calls = _positional_calls(tree)
    if not calls:
        return source, ()
    lines = [line.encode() for line in source.split("\n")]
    inserts: list[tuple[int, int, str]] = []
    notes: list[str] = []
    for call, primitive in calls:
        at, names = KEYWORD_AFTER[primitive]
        moved = list(zip(names, call.args[at:], strict=False))
        inserts += [(arg.lineno - 1, arg.col_offset, f"{name}=") for name, arg in moved]
        shown = ", ".join(f"{name}={ast.unparse(arg)}" for name, arg in moved)
        notes.append(f"passed {shown} to {primitive} by keyword")
        call.keywords = [ast.keyword(arg=name, value=arg) for name, arg in moved] + call.keywords
        call.args = call.args[:at]
    for row, col, text in sorted(inserts, reverse=True):
        lines[row] = lines[row][:col] + text.encode() + lines[row][col:]  # offsets are bytes
    rewritten = "\n".join(line.decode() for line in lines)
    try:
        done = ast.parse(rewritten)
    except SyntaxError:
        return source, ()
    if ast.dump(done) != ast.dump(tree):
        return source, ()
    return rewritten, tuple(notes)


def _positional_calls(tree: ast.Module) -> list[tuple[ast.Call, str]]:
    """Calls of a primitive ``rrf``/``fuse`` with more positional arguments than it takes."""
    names, modules = _primitive_bindings(tree)
    out = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        primitive = _called_primitive(node.func, names, modules)
        if primitive is None:
            continue
        at, keywords = KEYWORD_AFTER[primitive]
        extra = node.args[at:]
        if not extra or len(extra) > len(keywords):
            continue
        if any(isinstance(a, ast.Starred) for a in node.args):
            continue
        given = {k.arg for k in node.keywords}
        if given & set(keywords[: len(extra)]) or None in given:
            continue  # already a TypeError, or **kwargs: not for a rewrite to guess
        out.append((node, primitive))
    return sorted(out, key=lambda found: (found[0].lineno, found[0].col_offset))


def _primitive_bindings(tree: ast.Module) -> tuple[dict[str, str], set[str]]:
    """Local names bound to ``rrf``/``fuse`` of the primitives, and names of primitive modules.

    A name the source also binds to something else (another import, a ``def``, an
    assignment, an argument) is left out: which object a call reaches is then not for a
    rewrite to guess.
    """
    bindings: dict[str, set[str]] = {}
    for node in ast.walk(tree):
        for local, what in _imported(node):
            bindings.setdefault(local, set()).add(what)
    rebound = _bound_otherwise(tree)
    names: dict[str, str] = {}
    modules: set[str] = set()
    for local, whats in bindings.items():
        if len(whats) != 1 or local in rebound:
            continue
        what = next(iter(whats))
        if what in KEYWORD_AFTER:
            names[local] = what
        elif what == "module":
            modules.add(local)
    return names, modules


def _imported(node: ast.AST) -> list[tuple[str, str]]:
    """The names an import binds, each with what it is.

    What a name is: a primitive's name (``rrf``, ``fuse``), ``"module"`` (a primitives
    module) or ``"other"``.
    """
    if isinstance(node, ast.ImportFrom):
        primitives = node.level == 0 and node.module is not None and _is_primitives(node.module)
        out = []
        for alias in node.names:
            what = "other"
            if primitives and alias.name in KEYWORD_AFTER:
                what = alias.name
            elif primitives and node.module == PRIMITIVE_PACKAGE:
                what = "module"
            out.append((alias.asname or alias.name, what))
        return out
    if isinstance(node, ast.Import):
        return [
            (
                alias.asname or alias.name.split(".")[0],
                "module" if alias.asname and _is_primitives(alias.name) else "other",
            )
            for alias in node.names
        ]
    return []


def _bound_otherwise(tree: ast.Module) -> set[str]:
    """Names bound by something other than an import, or declared ``global``/``nonlocal``."""
    declared = (
        n
        for node in ast.walk(tree)
        if isinstance(node, ast.Global | ast.Nonlocal)
        for n in node.names
    )
    return bound_names(tree, imports=False) | set(declared)


def _called_primitive(func: ast.expr, names: dict[str, str], modules: set[str]) -> str | None:
    if isinstance(func, ast.Name):
        return names.get(func.id)
    if isinstance(func, ast.Attribute) and func.attr in KEYWORD_AFTER:
        owner = ast.unparse(func.value)
        if owner in modules or _is_primitives(owner):
            return func.attr
    return None


def _is_primitives(module: str) -> bool:
    return module == PRIMITIVE_PACKAGE or module.startswith(PRIMITIVE_PACKAGE + ".")
