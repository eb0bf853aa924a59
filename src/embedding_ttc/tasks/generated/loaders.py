"""The shipped generated tasks, built from the shared datasets' haystack task."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from embedding_ttc.errors import DatasetError, UnknownNameError
from embedding_ttc.registry import closest
from embedding_ttc.tasks.beir import find_file
from embedding_ttc.tasks.generated.build import HAYSTACK_TASK, make_needle_task, make_passkey_task
from embedding_ttc.tasks.jsonl import iter_jsonl
from embedding_ttc.tasks.task import RetrievalTask


def load_haystack_texts(data_root: Path, task: str = HAYSTACK_TASK) -> list[str]:
    """Read the document texts of a BEIR-layout task as haystack, in file order.

    Only ``corpus.jsonl`` is read, and only its ``text`` field.

    Args:
        data_root: the folder holding the shared task folders.
        task: the haystack task's folder name.

    Returns:
        The documents' texts.

    Raises:
        DatasetError: the folder or its ``corpus.jsonl`` is missing, a line is not a JSON object
            with a string ``text``, or the corpus is empty.

    """
    folder = Path(data_root) / task
    if not folder.is_dir():
        raise DatasetError(
            f"the generated long-document tasks need the haystack task folder {folder} "
            f"('{task}', BEIR layout), which does not exist"
        )
    corpus = find_file(folder, "corpus.jsonl")
    texts: list[str] = []
    for line_no, record in iter_jsonl(corpus):
        text = record.get("text")
        if not isinstance(text, str):
            raise DatasetError(f"{corpus}:{line_no}: no string field 'text'")
        texts.append(text)
    if not texts:
        raise DatasetError(f"{corpus} holds no documents")
    return texts


_MAKERS: dict[str, Callable[..., RetrievalTask]] = {
    "lemb_passkey": make_passkey_task,
    "lemb_needle": make_needle_task,
}


def load_generated(name: str, data_root: Path) -> RetrievalTask:
    """Build a shipped generated task (default seed and lengths) from the shared datasets.

    Args:
        name: ``"lemb_passkey"`` or ``"lemb_needle"``.
        data_root: the folder holding the shared task folders; the haystack is
            ``data_root / "lemb_qmsum" / "corpus.jsonl"``.

    Returns:
        The generated task.

    Raises:
        UnknownNameError: ``name`` is not a generated task.
        DatasetError: the haystack task is missing or malformed.

    """
    if name not in _MAKERS:
        near = closest(name, list(_MAKERS))
        hint = f" Did you mean: {', '.join(near)}?" if near else ""
        raise UnknownNameError(
            f"unknown generated task {name!r}.{hint} Known: {', '.join(sorted(_MAKERS))}"
        )
    texts = load_haystack_texts(data_root, HAYSTACK_TASK)
    return _MAKERS[name](texts, name=name, haystack_name=HAYSTACK_TASK)


def _load_passkey(data_root: Path) -> RetrievalTask:
    return load_generated("lemb_passkey", data_root)


def _load_needle(data_root: Path) -> RetrievalTask:
    return load_generated("lemb_needle", data_root)


GENERATED_TASKS: dict[str, Callable[[Path], RetrievalTask]] = {
    "lemb_passkey": _load_passkey,
    "lemb_needle": _load_needle,
}
"""Generated task name -> loader taking the shared datasets folder."""
