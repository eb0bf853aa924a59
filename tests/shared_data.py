"""Where the tests find real retrieval tasks: ``../shared/datasets`` and the packaged tasks.

A source checkout of the project has the shared datasets beside it (``../shared/datasets``, 25
tasks); a fresh clone has none. A test that needs a shared task is skipped there, with the
reason, and fails where the ``CI`` environment variable is set: CI always has the folder, so a
test it skipped would be a test nobody runs. Tests that only need the three packaged tasks
(``aila_statutes``, ``legal_summarization``, ``limit-small``: the same data as their shared
folders, as tests/tasks/test_packaged_tasks.py asserts) read them from a copy of the packaged
folders instead, and run everywhere.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from embedding_ttc.tasks.packaged import PACKAGED_TASKS, packaged_folder

REPO = Path(__file__).resolve().parents[1]
SHARED_DATASETS = REPO.parent / "shared" / "datasets"
"""The shared datasets: beside the repository's root, whatever the working directory."""


def shared_available() -> bool:
    """Whether ``../shared/datasets`` is there (its ``INDEX.tsv`` lists the tasks)."""
    return (SHARED_DATASETS / "INDEX.tsv").is_file()


def in_ci() -> bool:
    """Whether the ``CI`` environment variable is set (to anything but empty, 0 or false)."""
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def require_shared(what: str = "this test") -> Path:
    """The shared datasets folder; skip (or, under ``CI``, fail) when it is absent.

    Args:
        what: what needs the folder, for the message (a test, or a file in it).

    """
    if not shared_available():
        message = (
            f"{what} needs the shared retrieval datasets at {SHARED_DATASETS} "
            "(a checkout of the project with ../shared beside it)"
        )
        if in_ci():
            pytest.fail(f"{message}; CI is set, and CI always has them")
        pytest.skip(message)
    return SHARED_DATASETS


def copy_packaged_tasks(dest: Path) -> Path:
    """Copy the packaged task folders into ``dest``: a data root that ``--data-dir`` takes.

    A copy, not the package's own folders, so that nothing a test runs can write into the
    installed package.
    """
    dest.mkdir(parents=True, exist_ok=True)
    for name in PACKAGED_TASKS:
        shutil.copytree(packaged_folder(name), dest / name)
    return dest
