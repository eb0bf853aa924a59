"""Find tasks by name: the data root, the suites (kept as data files), and :func:`load_task`.

Task names resolve in this order: a generated task (``lemb_passkey``, ``lemb_needle``, built
from a folder of the data root), an MTEB task written ``mteb:<Name>`` (online), a folder of that
name under the data root (BEIR layout), then a task packaged with the library
(:mod:`embedding_ttc.tasks.packaged`). An ir_datasets collection is written ``irds:<id>``
(:mod:`embedding_ttc.tasks.irds_loader`).

The data root is the first of: ``--data-dir``, ``$EMBEDDING_TTC_DATA``, ``../shared/datasets``
(a source checkout with the project's shared data beside it), the user data folder
(:func:`user_data_dir`, where ``embedding-ttc data fetch`` writes). When none exists there is
no data root, and the packaged tasks alone are available.
"""

from __future__ import annotations

import difflib
import json
import os
from collections.abc import Sequence
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from embedding_ttc.errors import DatasetError, EmbeddingTTCError, UnknownNameError
from embedding_ttc.registry import closest
from embedding_ttc.tasks.beir import load_beir_folder
from embedding_ttc.tasks.beir_archives import ARCHIVES
from embedding_ttc.tasks.packaged import PACKAGED_TASKS, packaged_folder
from embedding_ttc.tasks.task import RetrievalTask

DATA_ENV = "EMBEDDING_TTC_DATA"

_DATA_DIR_HINT = "pass --data-dir DIR or set $EMBEDDING_TTC_DATA to a folder of BEIR task folders"


def _how_to_get(name: str) -> str:
    """How to get task ``name``: a data folder, and ``data fetch`` only when it can fetch it."""
    fetchable = ARCHIVES.names()
    if name in fetchable:
        return f"{_DATA_DIR_HINT}, or run `embedding-ttc data fetch {name}`"
    # Stricter than the registries' suggestions: a download is offered only for a near twin.
    near = difflib.get_close_matches(name, fetchable, n=1, cutoff=0.8)
    if near:
        return f"{_DATA_DIR_HINT} (fetchable nearby: `embedding-ttc data fetch {near[0]}`)"
    return _DATA_DIR_HINT


def _shared_candidates() -> list[Path]:
    here = Path(__file__).resolve()
    # A source checkout lives at <root>/src/embedding_ttc/tasks; shared/ sits beside <root>.
    repo = here.parents[3]
    return [Path.cwd() / ".." / "shared" / "datasets", repo.parent / "shared" / "datasets"]


def user_data_dir() -> Path:
    """Where downloaded task folders live: ``$XDG_DATA_HOME/embedding-ttc/datasets``.

    Without ``$XDG_DATA_HOME``, the platform's user data folder (``~/.local/share`` on Linux);
    an empty or relative value is ignored, as the XDG Base Directory specification asks.
    """
    xdg = os.environ.get("XDG_DATA_HOME", "").strip()
    if xdg and Path(xdg).is_absolute():
        return Path(xdg) / "embedding-ttc" / "datasets"
    from platformdirs import user_data_dir as platform_data_dir

    return Path(platform_data_dir("embedding-ttc")) / "datasets"


def find_data_root(explicit: Path | str | None = None) -> Path | None:
    """The data root (see the module docstring for the order), or ``None`` when there is none.

    Raises:
        DatasetError: a folder named by ``explicit`` or ``$EMBEDDING_TTC_DATA`` does not exist
            (a folder asked for by name is never silently skipped).

    """
    if explicit is not None:
        root = Path(explicit)
        if not root.is_dir():
            raise DatasetError(f"--data-dir {root} is not a directory")
        return root
    env = os.environ.get(DATA_ENV)
    if env:
        root = Path(env)
        if not root.is_dir():
            raise DatasetError(f"${DATA_ENV}={env} is not a directory")
        return root
    for cand in _shared_candidates():
        if cand.is_dir():
            return cand.resolve()
    user = user_data_dir()
    return user if _holds_a_task_folder(user) else None


def _holds_a_task_folder(folder: Path) -> bool:
    """Whether ``folder`` holds a task folder.

    Not only what a failed fetch leaves (a lock, a hidden staging folder), which would make an
    empty folder the data root.
    """
    if not folder.is_dir():
        return False
    return any(p.is_dir() and not p.name.startswith(".") for p in folder.iterdir())


def resolve_data_root(explicit: Path | str | None = None) -> Path:
    """:func:`find_data_root`, for a caller that cannot work without a data folder.

    Raises:
        DatasetError: when there is no data root or the chosen folder does not exist.

    """
    root = find_data_root(explicit)
    if root is None:
        raise DatasetError(
            "no data root: pass --data-dir DIR, set $EMBEDDING_TTC_DATA, put task folders "
            f"(BEIR layout) in ../shared/datasets or {user_data_dir()} "
            "(`embedding-ttc data fetch NAME` downloads there); "
            f"packaged tasks need none: {', '.join(PACKAGED_TASKS)}"
        )
    return root


@cache
def _suites() -> dict[str, Any]:
    text = resources.files("embedding_ttc.tasks").joinpath("suites/suites.json").read_text()
    suites: dict[str, Any] = json.loads(text)["suites"]
    return suites


def suite_names() -> list[str]:
    """Names of the suites shipped with the package."""
    return list(_suites())


def suite_tasks(name: str) -> list[str]:
    """Task names of suite ``name``; an unknown suite suggests the closest."""
    suites = _suites()
    if name not in suites:
        near = closest(name, list(suites))
        hint = f" Did you mean: {', '.join(near)}?" if near else ""
        raise UnknownNameError(f"unknown suite {name!r}.{hint} Suites: {', '.join(suites)}")
    return list(suites[name]["tasks"])


def suite_validation_tasks(name: str) -> list[str]:
    """The tasks suite ``name`` holds aside whole to validate a search (empty: none)."""
    suite_tasks(name)
    return list(_suites()[name].get("validation_tasks", []))


def transfer_only_tasks() -> dict[str, str]:
    """Tasks of the transfer-only suites (``heldout``, ``multilingual``), each with its suite.

    Those tasks report how programs transfer; nothing is chosen on them, so a program search
    refuses them (:func:`check_choosable`).
    """
    out: dict[str, str] = {}
    for name, suite in _suites().items():
        if suite.get("transfer_only"):
            out.update(dict.fromkeys(suite["tasks"], name))
    return out


def check_choosable(task_names: Sequence[str], purpose: str) -> None:
    """Refuse ``task_names`` holding a transfer-only task, for ``purpose`` (what would choose).

    Raises:
        EmbeddingTTCError: naming each transfer-only task and its suite.

    """
    barred = transfer_only_tasks()
    hits = [f"{t} ({barred[t]})" for t in task_names if t in barred]
    if hits:
        raise EmbeddingTTCError(
            f"{purpose} would choose on transfer-only tasks: {', '.join(hits)}; those suites "
            "are for reporting how programs transfer, never for choosing"
        )


def suite_description(name: str) -> str:
    """The one-line description of a suite."""
    suite_tasks(name)
    return str(_suites()[name].get("description", ""))


def _generated() -> dict[str, Any]:
    from embedding_ttc.tasks.generated import GENERATED_TASKS

    return dict(GENERATED_TASKS)


def is_task_folder(path: Path) -> bool:
    """Whether ``path`` is meant as a task folder: it holds ``qrels/``, a corpus or queries."""
    if not path.is_dir():
        return False
    if (path / "qrels").is_dir():
        return True
    names = ("corpus.jsonl", "corpus.jsonl.gz", "queries.jsonl", "queries.jsonl.gz")
    return any((path / f).is_file() for f in names)


def task_folders(data_root: Path | None) -> dict[str, Path]:
    """The folders under ``data_root`` meant as tasks (well formed or not), by name."""
    if data_root is None:
        return {}
    return {p.name: p for p in sorted(data_root.iterdir()) if is_task_folder(p)}


DATA_ROOT, PACKAGED, GENERATED = "data root", "packaged", "generated"
"""Where a task name resolves from (:func:`resolvable_tasks`)."""


def resolvable_tasks(data_root: Path | None) -> list[tuple[str, str, Path | None]]:
    """``(name, origin, path)`` of every task that resolves with ``data_root`` (``None``: none).

    The folders under the data root, the packaged tasks they do not shadow, the generated tasks
    (whose path is the data root they are built from).
    """
    folders = task_folders(data_root)
    out: list[tuple[str, str, Path | None]] = [(n, DATA_ROOT, p) for n, p in folders.items()]
    out += [(n, PACKAGED, packaged_folder(n)) for n in PACKAGED_TASKS if n not in folders]
    out += [(n, GENERATED, data_root) for n in sorted(_generated())]
    return out


def available_task_names(data_root: Path | None) -> list[str]:
    """Every task name that resolves with ``data_root`` (``None``: no data root)."""
    return [name for name, _, _ in resolvable_tasks(data_root)]


def load_task(name: str, data_root: Path | str | None = None) -> RetrievalTask:
    """Load the task called ``name`` (see the module docstring for the lookup order).

    ``data_root`` is ``--data-dir``; ``None`` finds the data root as :func:`find_data_root`
    does.

    Raises:
        UnknownNameError: no task of that name (the closest names suggested, and how to get it).
        DatasetError: the task's folder is malformed, or a generated task has no data root.

    """
    if name.startswith("mteb:"):
        from embedding_ttc.tasks.mteb_loader import load_mteb_task

        return load_mteb_task(name.removeprefix("mteb:"))
    if name.startswith("irds:"):
        from embedding_ttc.tasks.irds_loader import load_irds_task

        return load_irds_task(name.removeprefix("irds:"))
    return load_task_in(name, find_data_root(data_root))


def load_task_in(name: str, root: Path | None) -> RetrievalTask:
    """Load ``name`` with a data root already found (``None``: there is none).

    Raises:
        UnknownNameError: no task of that name (the closest names suggested, and how to get it).
        DatasetError: the task's folder is malformed, or a generated task has no data root.

    """
    if name.startswith(("mteb:", "irds:")):
        return load_task(name)
    folder = locate_task(name, root)
    generated = _generated()
    if name in generated:
        return generated[name](folder)  # type: ignore[no-any-return]
    return load_beir_folder(folder, name)  # a data root's folder or a packaged one


def locate_task(name: str, root: Path | None) -> Path:
    """Where ``name`` loads from, without loading it: its folder, or a generated task's root.

    Commands call it on every task named before any work, so that a missing task fails first.

    Raises:
        UnknownNameError: no task of that name (the closest names suggested, and how to get it).
        DatasetError: a generated task with no data root.

    """
    if name in _generated():
        if root is None:
            raise DatasetError(
                f"task {name!r} is generated from the 'lemb_qmsum' task folder, and there is no "
                f"data root: {_how_to_get('lemb_qmsum')}"
            )
        return root
    if root is not None and (root / name).is_dir():
        return root / name
    if name in PACKAGED_TASKS:
        return packaged_folder(name)
    near = closest(name, available_task_names(root))
    where = f"no folder {root / name}" if root is not None else "no data root"
    if near and name not in ARCHIVES:  # a misspelling: not how to get the misspelt name
        how = f"Did you mean: {', '.join(near)}? Packaged: {', '.join(PACKAGED_TASKS)}"
    else:
        how = f"Packaged: {', '.join(PACKAGED_TASKS)}; to get {name!r}, {_how_to_get(name)}"
    raise UnknownNameError(
        f"unknown task {name!r} ({where}; not packaged). {how}; MTEB tasks: mteb:<Name>"
    )
