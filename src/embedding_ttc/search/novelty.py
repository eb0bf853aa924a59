"""Structural novelty (constraint 5): a normalised-AST fingerprint and a similarity threshold.

Two programs are the same structure when they differ only in names, constants, comments,
docstrings or formatting. :func:`structure` turns a source into a sequence of tokens that
keeps what a program *does* (node types, operators, the attributes and functions it calls,
such as ``np.argsort`` or ``zscore_rows``) and abstracts what it merely *names*: local
identifiers become ``v0, v1, ...`` in order of first use, every literal becomes ``CONST``.
:func:`similarity` is difflib's ratio between two such sequences (``2·matches / total``), and
a candidate whose best ratio against a registered program reaches :data:`NOVELTY_THRESHOLD` is
a near-duplicate of that program.

A constant-only change (``K = 3`` → ``K = 5``) is therefore a duplicate (ratio 1.0), as the
paper's constraint 2 wants: constants are fixed once, never swept.
"""

from __future__ import annotations

import ast
import hashlib
import importlib
import inspect
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from difflib import SequenceMatcher

from embedding_ttc.programs.catalog import library_modules
from embedding_ttc.programs.outcome import Status
from embedding_ttc.runs.ledger import Ledger

NOVELTY_THRESHOLD = 0.92
"""Similarity at or above which a program is a near-duplicate. Renaming and re-ordering a
few statements of a 100-line program stays above it; adding or removing a channel or a fusion
step (tens of tokens) falls below it."""


class _Normaliser(ast.NodeVisitor):
    """Collects the structural token sequence of a module."""

    def __init__(self) -> None:
        self.tokens: list[str] = []
        self.names: dict[str, str] = {}
        self.imported: set[str] = set()

    def _name(self, name: str) -> str:
        if name in self.imported:
            return name
        if name not in self.names:
            self.names[name] = f"v{len(self.names)}"
        return self.names[name]

    def generic_visit(self, node: ast.AST) -> None:
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            return  # docstrings and bare string statements carry no structure
        self.tokens.append(type(node).__name__)
        super().generic_visit(node)

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self.imported.add(alias.asname or alias.name.split(".")[0])
            self.tokens.append(f"import:{alias.name}")

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        for alias in node.names:
            self.imported.add(alias.asname or alias.name)
            self.tokens.append(f"from:{node.module}:{alias.name}")

    def visit_Name(self, node: ast.Name) -> None:
        self.tokens.append(self._name(node.id))

    def visit_arg(self, node: ast.arg) -> None:
        self.tokens.append(self._name(node.arg))

    def visit_Attribute(self, node: ast.Attribute) -> None:
        self.visit(node.value)
        self.tokens.append(f".{node.attr}")

    def visit_Constant(self, node: ast.Constant) -> None:
        self.tokens.append("CONST")

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        self.tokens.append("def")
        self._name(node.name)
        for child in (node.args, *node.body):
            self.visit(child)

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self.tokens.append("class")
        self._name(node.name)
        for child in node.body:
            self.visit(child)


def structure(source: str) -> tuple[str, ...]:
    """The normalised structural token sequence of a program's source.

    Raises:
        SyntaxError: if the source does not parse.

    """
    normaliser = _Normaliser()
    normaliser.visit(ast.parse(source))
    return tuple(normaliser.tokens)


def fingerprint(tokens: Iterable[str]) -> str:
    """A short stable hash of a structure (equal for programs that differ only in names)."""
    return hashlib.blake2b("\x1f".join(tokens).encode(), digest_size=8).hexdigest()


def similarity(a: tuple[str, ...], b: tuple[str, ...]) -> float:
    """The difflib ratio between two structures, in ``[0, 1]`` (1 when identical)."""
    if a == b:
        return 1.0
    return SequenceMatcher(None, a, b, autojunk=False).ratio()


@dataclass(frozen=True)
class Closest:
    """The registered program most similar to a candidate."""

    name: str
    similarity: float

    @property
    def duplicate(self) -> bool:
        """Whether the candidate is a near-duplicate of it."""
        return self.similarity >= NOVELTY_THRESHOLD


def closest(candidate: tuple[str, ...], registered: Mapping[str, tuple[str, ...]]) -> Closest:
    """The registered structure most similar to ``candidate`` (ties: first by name)."""
    best = Closest("", 0.0)
    for name in sorted(registered):
        other = registered[name]
        if other == candidate:
            return Closest(name, 1.0)
        matcher = SequenceMatcher(None, candidate, other, autojunk=False)
        # The cheap upper bounds skip most comparisons; the exact ratio only for contenders.
        if matcher.real_quick_ratio() <= best.similarity:
            continue
        if matcher.quick_ratio() <= best.similarity:
            continue
        score = matcher.ratio()
        if score > best.similarity:
            best = Closest(name, score)
    return best


def library_structures() -> dict[str, tuple[str, ...]]:
    """The normalised structure of every library program's module (the registered programs)."""
    out: dict[str, tuple[str, ...]] = {}
    for name, module_name in library_modules().items():
        source = inspect.getsource(importlib.import_module(module_name))
        out[f"library:{name}"] = structure(source)
    return out


def registered_structures(
    ledger: Ledger, base: Mapping[str, tuple[str, ...]]
) -> dict[str, tuple[str, ...]]:
    """``base`` and the structure of every evaluated program in ``ledger``: the registry."""
    out = dict(base)
    for record in ledger.records:
        if record.status != Status.OK:
            continue
        source = ledger.source(record)
        if source is not None:
            out[record.program_id] = structure(source)
    return out
