"""The tasks shipped inside the package: usable with no data folder at all.

Three small tasks whose licences allow redistribution, built from the project's shared
datasets: ``aila_statutes`` (MIT), ``legal_summarization`` (Apache-2.0) and ``limit-small``
(CC-BY-4.0). Each folder here holds the BEIR files gzipped (``corpus.jsonl.gz``,
``queries.jsonl.gz``, ``qrels/test.tsv.gz``), the source's ``STATS.json``, and a ``NOTICE``
naming the licence, the source (repository, commit, files) and how the task was built.
:mod:`embedding_ttc.tasks.packaged.build` regenerates the data files byte for byte.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from embedding_ttc.errors import UnknownNameError
from embedding_ttc.registry import closest
from embedding_ttc.tasks.beir import load_beir_folder
from embedding_ttc.tasks.task import RetrievalTask

PACKAGED_TASKS: tuple[str, ...] = ("aila_statutes", "legal_summarization", "limit-small")
"""The names of the packaged tasks, each a folder beside this module."""


def packaged_root() -> Path:
    """The folder holding the packaged task folders (inside the installed package)."""
    return Path(str(resources.files(__name__)))


def packaged_folder(name: str) -> Path:
    """The folder of packaged task ``name``; an unknown name suggests the closest."""
    if name not in PACKAGED_TASKS:
        near = closest(name, list(PACKAGED_TASKS))
        hint = f" Did you mean: {', '.join(near)}?" if near else ""
        raise UnknownNameError(
            f"no packaged task {name!r}.{hint} Packaged: {', '.join(PACKAGED_TASKS)}"
        )
    return packaged_root() / name


def load_packaged_task(name: str) -> RetrievalTask:
    """Load packaged task ``name`` (gzipped BEIR files, read by the BEIR loader)."""
    return load_beir_folder(packaged_folder(name), name)
