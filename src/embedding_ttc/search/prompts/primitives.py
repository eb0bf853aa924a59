"""The allowed imports and the primitives, listed from the code so the list never drifts.

:func:`primitive_reference` reads each module of :data:`PRIMITIVE_MODULES` (``__all__`` or its
public definitions, ``inspect.signature`` and the first docstring line); the full prompt shows
it whole, and the compact prompt's helper list is cut from it.
"""

from __future__ import annotations

import ast
import functools
import importlib
import inspect
import re
from collections.abc import Callable
from typing import Any

from embedding_ttc.program_files.contract import ALLOWED_MODULES

PRIMITIVE_PACKAGE = "embedding_ttc.programs.primitives"

PRIMITIVE_MODULES: tuple[str, ...] = (
    "channels",
    "scores",
    "feedback",
    "late",
    "chunking",
    "lexical",
    "anchors",
)
"""The primitives modules listed in the prompt, in this order (a test checks none is missing)."""

UNLISTED_MODULES: tuple[str, ...] = ("text_analysis", "lexical_analysed", "tokenizers")
"""Primitives modules the prompt leaves out: the per-document text analyses behind the lexical
channels, which compute what ``lexical``'s functions compute (the same scores) from analyses a
deployed index stores (a program written from texts has ``lexical`` for that), and the
tokenizer registry, a setting of the run that ``lexical.tokenize`` already follows."""


@functools.cache
def primitive_reference() -> str:
    """The allowed imports and every primitive with a one-line signature and summary.

    Generated from :data:`PRIMITIVE_MODULES`: each module's ``__all__`` when it has one, else
    its public functions, classes and UPPER_CASE constants defined in the module, in source
    order. Signatures drop annotations to stay compact.
    """
    lines = [
        "Imports allowed: " + ", ".join(ALLOWED_MODULES) + ".",
        "Import primitives by module, e.g. "
        f"`from {PRIMITIVE_PACKAGE}.scores import candidate_mask, rrf, zscore_rows`.",
        "Candidate masks: `mask = candidate_mask(S.shape[0], S.shape[1], ctx.candidates)` is "
        "None when every query ranks every document; pass `mask=` to every primitive that "
        "ranks, selects or standardises, so that only each query's candidates count.",
    ]
    for short in PRIMITIVE_MODULES:
        module = importlib.import_module(f"{PRIMITIVE_PACKAGE}.{short}")
        lines.append("")
        lines.append(f"{PRIMITIVE_PACKAGE}.{short}:")
        lines.extend(f"  {entry}" for entry in _module_entries(module))
    return "\n".join(lines)


def _module_entries(module: Any) -> list[str]:
    names = list(getattr(module, "__all__", None) or _public_names(module))
    entries: list[str] = []
    for name in names:
        obj = getattr(module, name)
        if inspect.isclass(obj):
            entries.extend(_class_entries(name, obj))
        elif callable(obj):
            entries.append(f"{name}{_signature(obj)}{_summary(obj)}")
        elif isinstance(obj, (bool, int, float, str)):
            entries.append(f"{name} = {obj!r}")
    return entries


def _public_names(module: Any) -> list[str]:
    """Public functions and classes defined in ``module``, and its UPPER_CASE constants."""
    names: list[str] = []
    for node in ast.parse(inspect.getsource(module)).body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.append(node.name)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.extend([node.target.id] if node.target.id.isupper() else [])
        elif isinstance(node, ast.Assign):
            names.extend(t.id for t in node.targets if isinstance(t, ast.Name) and t.id.isupper())
    return [n for n in names if not n.startswith("_")]


def _class_entries(name: str, cls: type) -> list[str]:
    params = inspect.signature(cls).parameters
    head = name if any(p.startswith("_") for p in params) else f"{name}{_signature(cls)}"
    entries = [f"{head}{_summary(cls)}"]
    for attr, raw in vars(cls).items():
        if attr.startswith("_"):
            continue
        if isinstance(raw, property):
            entries.append(f"  .{attr}{_summary(raw)}")
        elif isinstance(raw, (classmethod, staticmethod)) or inspect.isfunction(raw):
            member = getattr(cls, attr)
            drop_self = inspect.isfunction(raw)
            entries.append(f"  .{attr}{_signature(member, drop_first=drop_self)}{_summary(raw)}")
    return entries


def _signature(obj: Callable[..., Any], *, drop_first: bool = False) -> str:
    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError):
        return "(...)"
    params = list(sig.parameters.values())[1 if drop_first else 0 :]
    bare = [p.replace(annotation=inspect.Parameter.empty) for p in params]
    return str(sig.replace(parameters=bare, return_annotation=inspect.Signature.empty))


def _summary(obj: Any) -> str:
    doc = inspect.getdoc(obj.__func__ if isinstance(obj, (classmethod, staticmethod)) else obj)
    first = doc.strip().splitlines()[0].strip() if doc and doc.strip() else ""
    first = re.sub(r":\w+:`", "`", first).replace("``", "`")  # reST roles to plain backticks
    return f" — {first}" if first else ""
