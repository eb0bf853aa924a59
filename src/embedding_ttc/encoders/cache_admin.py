"""Looking after a cache root: what each model's database holds, and pruning it.

A cache root holds one folder per model and revision (``<model>-<revision>``), each with its
database (:mod:`~embedding_ttc.encoders.cache_store`). Pruning deletes rows and then
VACUUMs, so the disk space is actually given back.

Age is the time an entry was *written* (its ``created`` column), not when it was last read:
recording every read would turn every warm pass into a pass of writes, rewriting each page of
the database. An entry older than ``--older-than`` but still in use is simply computed again.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

from embedding_ttc.encoders.cache_store import (
    STORE_NAME,
    CacheStore,
    StoreSummary,
    disk_bytes,
    model_stores,
)
from embedding_ttc.errors import UnknownNameError
from embedding_ttc.registry import closest

DAY = 86400.0


@dataclass(frozen=True)
class CacheFolder:
    """One model folder of a cache root and its database's summary."""

    name: str
    summary: StoreSummary


def cache_folders(root: Path) -> list[CacheFolder]:
    """Every model folder of ``root`` that holds a database, by name."""
    return [CacheFolder(f.name, _summary(f / STORE_NAME)) for f in model_stores(root)]


def _summary(db: Path) -> StoreSummary:
    store = CacheStore(db)
    try:
        return store.summary()
    finally:
        store.close()


def select(root: Path, model: str | None) -> list[Path]:
    """The databases of ``root``: all, or those whose folder name or model id is ``model``.

    A model id selects every revision of the model cached under ``root``.

    Raises:
        UnknownNameError: no folder or recorded model id is ``model`` (the closest are named).

    """
    folders = model_stores(root)
    if model is None:
        return [f / STORE_NAME for f in folders]
    names: dict[str, list[Path]] = {}
    for folder in folders:
        names.setdefault(folder.name, []).append(folder)
        store = CacheStore(folder / STORE_NAME)
        try:
            model_id = store.meta().get("model_id")
        finally:
            store.close()
        if model_id and model_id != folder.name:
            names.setdefault(model_id, []).append(folder)
    if model in names:
        return [f / STORE_NAME for f in names[model]]
    near = closest(model, list(names))
    hint = f" Did you mean: {', '.join(near)}?" if near else ""
    known = ", ".join(sorted(names)) or "none"
    raise UnknownNameError(f"no cached model {model!r} under {root}.{hint} Cached: {known}")


@dataclass(frozen=True)
class Pruned:
    """What pruning did to one database (``disk_after`` equals ``disk_before`` in a dry run)."""

    name: str
    entries: int
    disk_before: int
    disk_after: int


def prune(
    root: Path,
    *,
    model: str | None = None,
    older_than_days: float | None = None,
    dry_run: bool = False,
    now: float | None = None,
) -> list[Pruned]:
    """Delete entries: every one of ``model``'s, those older than the given days, or all.

    Args:
        root: the cache root.
        model: only this model's database (its folder name or model id); ``None``: every one.
        older_than_days: only entries written more than this many days ago; ``None``: all.
        dry_run: count what would go, delete nothing.
        now: the current time in unix seconds (default: the clock).

    """
    if older_than_days is not None and older_than_days < 0:
        raise ValueError(f"older_than_days is at least 0, got {older_than_days}")
    before = None
    if older_than_days is not None:
        before = (time.time() if now is None else now) - older_than_days * DAY
    out = []
    for db in select(root, model):
        store = CacheStore(db)
        try:
            size = disk_bytes(db)
            if dry_run:
                out.append(Pruned(db.parent.name, store.count(before), size, size))
                continue
            deleted = store.delete(before)
            if deleted:
                store.compact()
            out.append(Pruned(db.parent.name, deleted, size, disk_bytes(db)))
        finally:
            store.close()
    return out
