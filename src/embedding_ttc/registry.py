"""A name -> value registry that rejects duplicates and suggests the closest names."""

from __future__ import annotations

import difflib
from collections.abc import Iterator
from typing import Generic, TypeVar

from embedding_ttc.errors import UnknownNameError

T = TypeVar("T")


def closest(name: str, candidates: list[str], n: int = 3) -> list[str]:
    """Return up to ``n`` candidates closest to ``name`` (case-insensitive)."""
    lowered = {c.lower(): c for c in candidates}
    hits = difflib.get_close_matches(name.lower(), list(lowered), n=n, cutoff=0.5)
    prefix = [c for c in candidates if c.lower().startswith(name.lower()[:3])] if name else []
    out: list[str] = [lowered[h] for h in hits]
    out += [p for p in prefix if p not in out]
    return out[:n]


class Registry(Generic[T]):
    """A dict of named entries: a duplicate name is an error, an unknown one suggests others."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._entries: dict[str, T] = {}

    def register(self, name: str, value: T) -> T:
        """Add ``value`` under ``name``; raise ``ValueError`` if the name is taken."""
        if name in self._entries:
            raise ValueError(f"{self.kind} {name!r} is already registered")
        self._entries[name] = value
        return value

    def get(self, name: str) -> T:
        """Look ``name`` up, or raise :class:`UnknownNameError` naming the closest entries."""
        try:
            return self._entries[name]
        except KeyError:
            near = closest(name, list(self._entries))
            hint = f" Did you mean: {', '.join(near)}?" if near else ""
            known = ", ".join(sorted(self._entries))
            raise UnknownNameError(f"unknown {self.kind} {name!r}.{hint} Known: {known}") from None

    def names(self) -> list[str]:
        """Registered names in registration order."""
        return list(self._entries)

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)
