"""Load any ir_datasets collection as a task: ``irds:<dataset id>`` (``irds:beir/scifact/test``).

`ir_datasets <https://ir-datasets.com>`_ (MacAvaney et al., SIGIR 2021) names hundreds of
collections and downloads each on first use into ``$IR_DATASETS_HOME`` (``~/.ir_datasets``).
This module reads one dataset id's docs, queries and qrels into a :class:`RetrievalTask`.

Documents come in many record types (``GenericDoc``, ``BeirTitleDoc``, ``CranfieldDoc``,
``TrecDoc``...), all named tuples; they are read through their fields, not their type:

* the title is the ``title`` field when the record has one besides a ``text`` or ``body``;
* the text is the ``text`` field, else ``body``, else the record's ``default_text()`` (the
  title then stays empty: ``default_text`` already holds it where the type has one).

Queries take their ``text`` field, else ``default_text()`` (a TREC topic's title).

Judgements follow the BEIR folder loader's rules (:mod:`embedding_ttc.tasks.beir`): grades
are kept as the integers the collection gives, ``0`` (judged non-relevant) and negative
grades included; judgements naming an unknown document or query are dropped and counted;
queries with empty text are dropped and counted; queries without judgements are not
evaluated. A (query, document) pair judged twice with the same grade counts once (collections
assembled from several assessment rounds repeat rows); judged twice with different grades, it
is an error, as in a BEIR folder.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Iterator
from types import MappingProxyType
from typing import Any

from embedding_ttc.errors import DatasetError, MissingExtraError, UnknownNameError
from embedding_ttc.registry import closest
from embedding_ttc.tasks.judgements import evaluable_queries, join_judgements
from embedding_ttc.tasks.task import RetrievalTask

__all__ = ["PREFIX", "doc_fields", "load_irds_task"]

PREFIX = "irds:"
_PURPOSE = "Loading ir_datasets collections (irds:<id>)"

# Modules whose exceptions mean "the download failed" (ir_datasets downloads with requests).
_NETWORK_MODULES = ("requests", "urllib3", "urllib", "http", "socket", "ssl")


def _import_irds() -> Any:
    """Import ``ir_datasets`` lazily, turning a missing install into :class:`MissingExtraError`."""
    try:
        import ir_datasets
    except ImportError as exc:
        raise MissingExtraError("ir_datasets", "irds", _PURPOSE) from exc
    return ir_datasets


def _text_field(record: Any, names: tuple[str, ...]) -> str | None:
    """The first of ``names`` that the record has as a string field, else ``None``."""
    fields = getattr(record, "_fields", ())
    for name in names:
        if name in fields:
            value = getattr(record, name)
            return "" if value is None else str(value)
    return None


def doc_fields(doc: Any) -> tuple[str, str]:
    """``(title, text)`` of an ir_datasets document record (see the module docstring).

    Raises:
        DatasetError: the record has no ``text`` or ``body`` field and no ``default_text()``.

    """
    body = _text_field(doc, ("text", "body"))
    if body is not None:
        return _text_field(doc, ("title",)) or "", body
    default_text = getattr(doc, "default_text", None)
    if callable(default_text):
        return "", str(default_text())
    raise DatasetError(
        f"ir_datasets document type {type(doc).__name__} has no text field "
        f"(fields: {', '.join(getattr(doc, '_fields', ()))}) and no default_text()"
    )


def _query_text(query: Any) -> str:
    text = _text_field(query, ("text",))
    if text is not None:
        return text
    default_text = getattr(query, "default_text", None)
    if callable(default_text):
        return str(default_text())
    raise DatasetError(
        f"ir_datasets query type {type(query).__name__} has no text field "
        f"(fields: {', '.join(getattr(query, '_fields', ()))}) and no default_text()"
    )


def _is_download_error(exc: BaseException) -> bool:
    """Whether ``exc`` (or what it wraps) is a failed download rather than a bug in the data."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, (OSError, TimeoutError)):  # ConnectionError, FileNotFoundError
            return True
        if (type(current).__module__ or "").split(".")[0] in _NETWORK_MODULES:
            return True
        if isinstance(current, RuntimeError) and "download" in str(current).lower():
            return True  # ir_datasets' "All download sources failed"
        current = current.__cause__ or current.__context__
    return False


def _short_failure(exc: BaseException) -> str:
    """``<url>: <reason>`` of a failed download, short enough for one line.

    ir_datasets raises ``RuntimeError("All download sources failed", [(source, error)...])``
    when every mirror failed; the first source's URL and error are named. A socket error's
    ``[Errno N] ...`` stands for the whole requests/urllib3 chain around it.
    """
    url = None
    args = exc.args if isinstance(exc, RuntimeError) else ()
    if len(args) == 2 and isinstance(args[1], list) and args[1] and isinstance(args[1][0], tuple):
        source, exc = args[1][0]
        url = getattr(source, "url", None)
    url = url or getattr(getattr(exc, "request", None), "url", None)
    text = str(exc)
    errno = re.search(r"\[Errno -?\d+\] [^'\")]+", text)
    reason = errno.group(0) if errno else f"{type(exc).__name__}: {text}"
    if len(reason) > 200:
        reason = reason[:197] + "..."
    return f"{url}: {reason}" if url else reason


def _download_message(dataset_id: str, home: str, exc: BaseException) -> str:
    return (
        f"could not read irds:{dataset_id}: ir_datasets could not download its data "
        f"({_short_failure(exc)}). The data must be downloaded once with network access; "
        f"ir_datasets keeps it under {home} (set by $IR_DATASETS_HOME), where a copy made on "
        "another machine can also be placed"
    )


def _unknown_id(irds: Any, dataset_id: str) -> UnknownNameError:
    ids = list(irds.registry)
    near = closest(dataset_id, ids, n=5)
    hint = f" Did you mean: {', '.join(near)}?" if near else ""
    return UnknownNameError(
        f"unknown ir_datasets id {dataset_id!r}.{hint} "
        "The ids are listed at https://ir-datasets.com"
    )


def _missing_parts(irds: Any, dataset: Any, dataset_id: str) -> str | None:
    """Name what the dataset lacks among docs, queries and qrels, with ids that have all three."""
    have = {part: bool(getattr(dataset, f"has_{part}")()) for part in ("docs", "queries", "qrels")}
    missing = [p for p, ok in have.items() if not ok]
    if not missing:
        return None
    provided = [p for p, ok in have.items() if ok]
    message = (
        f"irds:{dataset_id} provides no {' and no '.join(missing)} "
        f"(it provides {', '.join(provided) or 'none of docs, queries, qrels'}); "
        "a task needs all three"
    )
    complete = []
    for child in irds.registry:
        if child.startswith(dataset_id + "/"):
            try:
                sub = irds.registry[child]
            except Exception:  # a child that cannot even be built is no suggestion
                continue
            if all(getattr(sub, f"has_{p}")() for p in ("docs", "queries", "qrels")):
                complete.append(child)
    if complete:
        message += f". Try: {', '.join(f'irds:{c}' for c in complete[:6])}"
    return message


def _read(
    dataset_id: str, home: str, what: str, items: Callable[[], Iterable[Any]]
) -> Iterator[Any]:
    """Iterate ``items()``, turning a failed download into one clear :class:`DatasetError`.

    ``items`` is called inside the guard: ir_datasets may download when the iterator is made.
    """
    try:
        yield from items()
    except DatasetError:
        raise
    except Exception as exc:
        if _is_download_error(exc):
            raise DatasetError(_download_message(dataset_id, home, exc)) from exc
        raise DatasetError(
            f"irds:{dataset_id}: reading its {what} failed ({type(exc).__name__}: {exc})"
        ) from exc


def load_irds_task(dataset_id: str) -> RetrievalTask:
    """Load the ir_datasets collection ``dataset_id`` (without the ``irds:`` prefix).

    Needs the ``irds`` extra; the data is downloaded by ir_datasets on first use.

    Returns:
        The task, named ``irds:<dataset_id>``, ``source="irds"``, full-corpus; its metadata
        records the id, the ir_datasets version and the document type.

    Raises:
        MissingExtraError: ``ir_datasets`` is not installed.
        UnknownNameError: ir_datasets has no dataset of that id (the closest ids are named).
        DatasetError: the dataset lacks docs, queries or qrels, its data could not be
            downloaded, or no query has both text and judgements.

    """
    irds = _import_irds()
    try:
        dataset = irds.registry[dataset_id]
    except KeyError:
        raise _unknown_id(irds, dataset_id) from None
    problem = _missing_parts(irds, dataset, dataset_id)
    if problem:
        raise DatasetError(problem)
    home = str(irds.util.home_path())

    doc_ids: list[str] = []
    titles: list[str] = []
    bodies: list[str] = []
    empty_docs = 0
    for doc in _read(dataset_id, home, "docs", dataset.docs_iter):
        title, body = doc_fields(doc)
        doc_ids.append(str(doc.doc_id))
        titles.append(title)
        bodies.append(body)
        empty_docs += not (title + body).strip()
    query_text: dict[str, str] = {}
    for query in _read(dataset_id, home, "queries", dataset.queries_iter):
        query_text[str(query.query_id)] = _query_text(query)
    where = PREFIX + dataset_id
    rows = (
        (where, str(q.query_id), str(q.doc_id), int(q.relevance))
        for q in _read(dataset_id, home, "qrels", dataset.qrels_iter)
    )
    doc_set = set(doc_ids)
    if len(doc_set) != len(doc_ids):
        raise DatasetError(f"{where}: the corpus repeats document ids")
    # Collections assembled from several assessment rounds repeat rows: same grade, once.
    judged = join_judgements(rows, query_text, doc_set, same_grade_repeats=True)
    qrels, warnings = judged.qrels, judged.warnings
    if empty_docs:
        warnings.append(f"{empty_docs} documents have empty text (kept)")
    kept = evaluable_queries(query_text, query_text, judged, where=where)

    return RetrievalTask(
        name=PREFIX + dataset_id,
        doc_ids=doc_ids,
        doc_titles=titles,
        doc_bodies=bodies,
        query_ids=kept,
        query_texts=[query_text[q] for q in kept],
        qrels={q: qrels[q] for q in kept},
        source="irds",
        metadata=MappingProxyType(
            {
                "irds_id": dataset_id,
                "ir_datasets_version": str(getattr(irds, "__version__", "unknown")),
                "doc_type": dataset.docs_cls().__name__,
                "ir_datasets_home": os.fspath(home),
            }
        ),
        warnings=warnings,
    )
