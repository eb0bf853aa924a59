"""Find tasks by name: the data root, the suites (kept as data files), and :func:`load_task`.

Task names resolve in this order: a generated task (``lemb_passkey``, ``lemb_needle``), an MTEB
task written ``mteb:<Name>`` (online), a folder of that name under the data root (BEIR layout).
An ir_datasets collection is written ``irds:<id>`` (:mod:`embedding_ttc.tasks.irds_loader`).
"""

from __future__ import annotations

import json
import os
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from embedding_ttc.errors import DatasetError, UnknownNameError
from embedding_ttc.registry import closest
from embedding_ttc.tasks.beir import load_beir_folder
from embedding_ttc.tasks.task import RetrievalTask

DATA_ENV = "EMBEDDING_TTC_DATA"


def _shared_candidates() -> list[Path]:
    here = Path(__file__).resolve()
    # A source checkout lives at <root>/src/embedding_ttc/tasks; shared/ sits beside <root>.
    repo = here.parents[3]
    return [Path.cwd() / ".." / "shared" / "datasets", repo.parent / "shared" / "datasets"]


def resolve_data_root(explicit: Path | str | None = None) -> Path:
    """``explicit``, else ``$EMBEDDING_TTC_DATA``, else ``../shared/datasets`` if it exists.

    Raises:
        DatasetError: when none applies or the chosen folder does not exist.

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
    raise DatasetError(
        "no data root: pass --data-dir DIR, set $EMBEDDING_TTC_DATA, or put task folders "
        "(BEIR layout: corpus.jsonl, queries.jsonl, qrels/test.tsv) in ../shared/datasets"
    )


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


def suite_description(name: str) -> str:
    """The one-line description of a suite."""
    suite_tasks(name)
    return str(_suites()[name].get("description", ""))


def _generated() -> dict[str, Any]:
    from embedding_ttc.tasks.generated import GENERATED_TASKS

    return dict(GENERATED_TASKS)


def available_task_names(data_root: Path) -> list[str]:
    """Folders under ``data_root`` that look like tasks, plus the generated tasks."""
    folders = sorted(p.name for p in data_root.iterdir() if p.is_dir() and (p / "qrels").is_dir())
    return folders + sorted(_generated())


def load_task(name: str, data_root: Path | str | None = None) -> RetrievalTask:
    """Load the task called ``name`` (see the module docstring for the lookup order)."""
    generated = _generated()
    if name in generated:
        return generated[name](resolve_data_root(data_root))  # type: ignore[no-any-return]
    if name.startswith("mteb:"):
        from embedding_ttc.tasks.mteb_loader import load_mteb_task

        return load_mteb_task(name.removeprefix("mteb:"))
    if name.startswith("irds:"):
        from embedding_ttc.tasks.irds_loader import load_irds_task

        return load_irds_task(name.removeprefix("irds:"))
    root = resolve_data_root(data_root)
    folder = root / name
    if not folder.is_dir():
        names = available_task_names(root)
        near = closest(name, names)
        hint = f" Did you mean: {', '.join(near)}?" if near else ""
        raise UnknownNameError(
            f"unknown task {name!r}: no folder {folder}.{hint} "
            f"Known under {root}: {', '.join(names)}; MTEB tasks: mteb:<Name>"
        )
    return load_beir_folder(folder, name)
