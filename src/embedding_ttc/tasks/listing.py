"""What ``embedding-ttc tasks`` lists: every task name that resolves here, and where from.

Each name that :func:`~embedding_ttc.tasks.catalog.load_task` resolves is loaded once and
listed with its origin (a folder of the data root, a task packaged with the library, or a
generated task) and either its counts or the reason it cannot be loaded:

* ``malformed``: a folder (of the data root, or packaged) that the BEIR loader refuses, e.g. a
  corrupt ``corpus.jsonl`` or a missing ``queries.jsonl``;
* ``unavailable``: a generated task whose source folder is missing or malformed.

One bad folder never hides the others. The listing is a value; the command renders it as a
table or as JSON. Each section is its own field, so a further one (such as tasks that could be
downloaded) is added beside these without changing them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from embedding_ttc.errors import DatasetError
from embedding_ttc.tasks.catalog import GENERATED, load_task_in, resolvable_tasks


@dataclass(frozen=True)
class TaskEntry:
    """One task name: where it resolves, and its counts or why it does not load.

    Attributes:
        task: the name ``--task`` takes.
        origin: ``"data root"``, ``"packaged"`` or ``"generated"``.
        path: the folder it is read from (a generated task's: the data root), if any.
        stats: :meth:`RetrievalTask.stats` when it loads, else ``None``.
        error: the loader's one-line reason when it does not, else ``None``.

    """

    task: str
    origin: str
    path: str | None
    stats: dict[str, Any] | None = None
    error: str | None = None

    @property
    def status(self) -> str:
        """``ok``, ``malformed`` (a folder the loader refuses) or ``unavailable`` (generated)."""
        if self.error is None:
            return "ok"
        return "unavailable" if self.origin == GENERATED else "malformed"

    def to_json(self) -> dict[str, Any]:
        """The entry as JSON: the counts for a loaded task, the error for one that is not."""
        where = {"origin": self.origin, "path": self.path}
        if self.stats is not None:
            return {**self.stats, **where}
        return {"task": self.task, **where, "error": self.error}


@dataclass(frozen=True)
class TaskListing:
    """Every task name that resolves with one data root."""

    data_dir: str | None
    entries: tuple[TaskEntry, ...] = field(default_factory=tuple)

    def with_status(self, status: str) -> list[TaskEntry]:
        """The entries of one status, in listing order."""
        return [e for e in self.entries if e.status == status]

    def to_json(self) -> dict[str, Any]:
        """``data_dir``, then one list per status: ``tasks``, ``malformed``, ``unavailable``."""
        return {
            "data_dir": self.data_dir,
            "tasks": [e.to_json() for e in self.with_status("ok")],
            "malformed": [e.to_json() for e in self.with_status("malformed")],
            "unavailable": [e.to_json() for e in self.with_status("unavailable")],
        }


def _entry(name: str, origin: str, path: Path | None, data_root: Path | None) -> TaskEntry:
    try:
        stats = load_task_in(name, data_root).stats()
    except (DatasetError, OSError) as exc:  # refused by the loader, or unreadable
        return TaskEntry(name, origin, str(path) if path else None, error=str(exc))
    return TaskEntry(name, origin, str(path) if path else None, stats=stats)


def list_tasks(data_root: Path | None) -> TaskListing:
    """Load every task that resolves with ``data_root`` (``None``: no data root) and list it."""
    entries = [
        _entry(name, origin, path, data_root) for name, origin, path in resolvable_tasks(data_root)
    ]
    return TaskListing(str(data_root) if data_root else None, tuple(entries))
