"""Load MTEB retrieval tasks by name through the ``mteb`` package (needs the Hugging Face hub).

Two data layouts are read after ``task.load_data()``:

* **mteb 1.x** (and 2.x tasks that still fill the old attributes): ``task.corpus[split]``,
  ``task.queries[split]`` and ``task.relevant_docs[split]`` (one more ``[subset]`` level first
  for multilingual tasks). Corpus values are ``{"title", "text"}`` dicts (1.12) or the already
  joined string ``title + " " + text`` (1.39); query values are strings, or lists of turns for
  conversational tasks.
* **mteb 2.x**: ``task.dataset[subset][split]``, a dict with ``corpus`` and ``queries``
  (``datasets.Dataset`` with ``id``/``title``/``text`` columns, queries possibly with an
  ``instruction`` column), ``relevant_docs`` (``query id -> {doc id: score}``) and
  ``top_ranked`` (``query id -> candidate doc ids`` for reranking tasks, else ``None``).

Both are turned into plain dicts and passed to :func:`mteb_to_task`, which is pure and
testable without ``mteb``. ``ignore_identical_ids`` (a class attribute in both versions, set
for ArguAna, Quora, FiQA, ...) becomes ``exclude_self_hits``.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from types import MappingProxyType
from typing import Any

from embedding_ttc.errors import DatasetError, MissingExtraError, UnknownNameError
from embedding_ttc.tasks.task import RetrievalTask

__all__ = [
    "corpus_from_dataset",
    "import_mteb",
    "load_mteb_task",
    "mteb_to_task",
    "queries_from_dataset",
]

_PURPOSE = "Loading MTEB tasks by name"

# Modules whose exceptions mean "the hub or the download layer failed".
_HUB_MODULES = (
    "huggingface_hub",
    "datasets",
    "fsspec",
    "requests",
    "urllib3",
    "httpx",
    "httpcore",
    "aiohttp",
    "socket",
    "ssl",
)


def _query_text(value: Any) -> str:
    """Flatten an MTEB query value to one string, as MTEB does before encoding.

    Strings pass through. Conversations (lists of turns) are joined with ``"; "``; turns given
    as ``{"role", "content"}`` dicts become ``"role: content"``.
    """
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        turns = [
            f"{t['role']}: {t['content']}" if isinstance(t, Mapping) else str(t) for t in value
        ]
        return "; ".join(turns)
    raise DatasetError(f"unsupported MTEB query value of type {type(value).__name__}")


def _title_and_body(value: Any) -> tuple[str, str]:
    """Split an MTEB corpus value into ``(title, text)``.

    Args:
        value: a ``{"title", "text"}`` mapping, or a plain string (mteb 1.39 stores the joined
            ``title + " " + text``; it is kept whole as the text, with an empty title).

    Returns:
        The title (``""`` where none) and the text.

    """
    if isinstance(value, str):
        return "", value
    if isinstance(value, Mapping):
        title = value.get("title") or ""
        text = value.get("text") or ""
        if not isinstance(title, str) or not isinstance(text, str):
            raise DatasetError("MTEB corpus entry has a non-string title or text")
        return title, text
    raise DatasetError(f"unsupported MTEB corpus value of type {type(value).__name__}")


def _grade(score: Any) -> tuple[int, bool]:
    """Return ``(integer grade, was_rounded)`` for an MTEB relevance score."""
    if isinstance(score, bool):
        return int(score), False
    if isinstance(score, int):
        return score, False
    value = float(score)
    grade = round(value)
    return grade, grade != value


def _graded_qrels(
    qrels: Mapping[str, Mapping[str, Any]],
) -> tuple[dict[str, dict[str, int]], int]:
    """Return string-keyed integer qrels without empty entries, and how many were rounded."""
    judged: dict[str, dict[str, int]] = {}
    rounded = 0
    for query_id, judgements in qrels.items():
        graded: dict[str, int] = {}
        for doc_id, score in judgements.items():
            grade, was_rounded = _grade(score)
            rounded += was_rounded
            graded[str(doc_id)] = grade
        if graded:
            judged[str(query_id)] = graded
    return judged, rounded


def mteb_to_task(
    name: str,
    corpus: Mapping[str, Any],
    queries: Mapping[str, Any],
    qrels: Mapping[str, Mapping[str, Any]],
    ignore_identical_ids: bool = False,
    *,
    top_ranked: Mapping[str, Iterable[str]] | None = None,
    metadata: Mapping[str, Any] | None = None,
) -> RetrievalTask:
    """Convert one split of an MTEB retrieval task, held in plain dicts, into a task.

    Queries are those with at least one judgement (MTEB drops the others), in ``queries``
    order; documents keep ``corpus`` order. Ids become strings and grades integers.

    Args:
        name: the MTEB task name (becomes the task name).
        corpus: ``doc id -> {"title": ..., "text": ...}`` or ``doc id -> text``.
        queries: ``query id -> text`` (or a list of conversation turns).
        qrels: ``query id -> {doc id: score}``.
        ignore_identical_ids: MTEB's flag to drop a document whose id equals the query id from
            that query's ranking; becomes ``exclude_self_hits``.
        top_ranked: for reranking tasks, ``query id -> candidate doc ids``; becomes ``pools``.
        metadata: provenance to record on the task.

    Returns:
        The task, ``source="mteb"``. Its ``warnings`` count what was dropped or repaired:
        judged queries without text, judgements naming documents absent from the corpus (kept,
        as MTEB keeps them), fractional scores rounded, queries without a candidate list.

    Raises:
        DatasetError: an entry has an unsupported shape, or no query has judgements.

    """
    doc_ids = [str(d) for d in corpus]
    titles, bodies = [], []
    for value in corpus.values():
        title, body = _title_and_body(value)
        titles.append(title)
        bodies.append(body)
    known_docs = set(doc_ids)
    judged, rounded = _graded_qrels(qrels)

    query_ids: list[str] = []
    query_texts: list[str] = []
    for query_id, value in queries.items():
        if str(query_id) in judged:
            query_ids.append(str(query_id))
            query_texts.append(_query_text(value))
    if not query_ids:
        raise DatasetError(f"MTEB task {name}: no query has relevance judgements")
    kept = set(query_ids)
    final_qrels = {q: judged[q] for q in query_ids}

    warnings: list[str] = []
    missing_text = len(set(judged) - kept)
    if missing_text:
        warnings.append(f"{missing_text} judged queries have no text and were dropped")
    missing_docs = sum(1 for d in final_qrels.values() for doc in d if doc not in known_docs)
    if missing_docs:
        warnings.append(
            f"{missing_docs} judgements name documents missing from the corpus "
            "(kept, as MTEB keeps them)"
        )
    if rounded:
        warnings.append(f"{rounded} fractional relevance scores were rounded to integers")

    pools: dict[str, tuple[str, ...]] | None = None
    if top_ranked is not None:
        pools = {q: tuple(str(d) for d in top_ranked.get(q, ())) for q in query_ids}
        empty = sum(1 for p in pools.values() if not p)
        if empty:
            warnings.append(f"{empty} queries have no candidate list (empty pools)")

    return RetrievalTask(
        name=name,
        doc_ids=tuple(doc_ids),
        doc_titles=tuple(titles),
        doc_bodies=tuple(bodies),
        query_ids=tuple(query_ids),
        query_texts=tuple(query_texts),
        qrels=MappingProxyType(final_qrels),
        pools=None if pools is None else MappingProxyType(pools),
        exclude_self_hits=bool(ignore_identical_ids),
        source="mteb",
        metadata=MappingProxyType(dict(metadata or {})),
        warnings=tuple(warnings),
    )


# ---------------------------------------------------------------------------------------------
# Reading a loaded mteb task
# ---------------------------------------------------------------------------------------------


def _pick(options: Iterable[str], wanted: str | None, preferred: str, what: str, name: str) -> str:
    """Choose ``wanted``, else ``preferred`` when present, else the only option."""
    available = list(options)
    if wanted is not None:
        if wanted not in available:
            raise DatasetError(
                f"MTEB task {name} has no {what} {wanted!r}; available: {', '.join(available)}"
            )
        return wanted
    if preferred in available:
        return preferred
    if len(available) == 1:
        return available[0]
    raise DatasetError(
        f"MTEB task {name} has several {what}s ({', '.join(available)}); choose one with {what}=..."
    )


def _split_level(
    root: Mapping[str, Any], split: str, subset: str | None, name: str
) -> tuple[Any, str]:
    """Descend ``root[split]`` or ``root[subset][split]`` (multilingual v1 layout)."""
    if split in root:
        if subset not in (None, "default"):
            raise DatasetError(f"MTEB task {name} has no subsets; drop subset={subset!r}")
        return root[split], "default"
    chosen = _pick(root.keys(), subset, "default", "subset", name)
    if split not in root[chosen]:
        raise DatasetError(f"MTEB task {name} has no split {split!r} in subset {chosen!r}")
    return root[chosen][split], chosen


def _rows(dataset: Any) -> Iterable[Mapping[str, Any]]:
    """Iterate the rows of a ``datasets.Dataset`` (or any iterable of row dicts)."""
    rows: Iterable[Mapping[str, Any]] = iter(dataset)
    return rows


def corpus_from_dataset(dataset: Any) -> dict[str, dict[str, str]]:
    """An mteb 2.x corpus (``id``, ``title``, ``text`` rows) as ``doc id -> {title, text}``."""
    columns = set(getattr(dataset, "column_names", ()) or ())
    if columns and "text" not in columns:
        raise DatasetError("the MTEB corpus has no 'text' column (not a text retrieval task)")
    return {
        str(row["id"]): {"title": row.get("title") or "", "text": row.get("text") or ""}
        for row in _rows(dataset)
    }


def queries_from_dataset(dataset: Any) -> dict[str, str]:
    """An mteb 2.x query set (``id``, ``text``, maybe ``instruction`` rows) as ``id -> text``.

    The text is what mteb 2.x encodes (``mteb._create_dataloaders._retrieval_texts``): a
    query's text followed by its instruction, or for a conversation (a list of turns) the
    instruction followed by the flattened turns.
    """
    out: dict[str, str] = {}
    for row in _rows(dataset):
        value: Any = row.get("text")
        text = _query_text(value)
        instruction = row.get("instruction")
        if instruction is not None:
            text = f"{instruction} {text}" if isinstance(value, list) else f"{text} {instruction}"
        out[str(row["id"])] = text
    return out


def _extract(
    task: Any, split: str, subset: str | None, name: str
) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any], dict[str, Any] | None, str]:
    """Return ``(corpus, queries, qrels, top_ranked, subset)`` as plain dicts."""
    if all(hasattr(task, a) for a in ("corpus", "queries", "relevant_docs")):  # v1 layout
        corpus, chosen = _split_level(task.corpus, split, subset, name)
        queries, _ = _split_level(task.queries, split, subset, name)
        qrels, _ = _split_level(task.relevant_docs, split, subset, name)
        top_root = getattr(task, "top_ranked", None)
        top = _split_level(top_root, split, subset, name)[0] if top_root else None
        return dict(corpus), dict(queries), dict(qrels), top, chosen
    dataset = getattr(task, "dataset", None)
    if not isinstance(dataset, Mapping) or not dataset:
        raise DatasetError(f"MTEB task {name} loaded no data this loader can read")
    chosen = _pick(dataset.keys(), subset, "default", "subset", name)
    data = dataset[chosen].get(split) if isinstance(dataset[chosen], Mapping) else None
    if not isinstance(data, Mapping) or not {"corpus", "queries", "relevant_docs"} <= set(data):
        raise DatasetError(
            f"MTEB task {name} keeps split {split!r} in a layout this loader cannot read "
            "(expected corpus, queries and relevant_docs)"
        )
    top = data.get("top_ranked")
    return (
        corpus_from_dataset(data["corpus"]),
        queries_from_dataset(data["queries"]),
        {str(q): dict(d) for q, d in data["relevant_docs"].items()},
        None if top is None else {str(q): list(d) for q, d in top.items()},
        chosen,
    )


def _is_hub_error(exc: BaseException) -> bool:
    """Whether ``exc`` (or an exception it wraps) comes from the network or download layer."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, (ConnectionError, TimeoutError)):
            return True
        module = type(current).__module__ or ""
        if module.split(".")[0] in _HUB_MODULES:
            return True
        current = current.__cause__ or current.__context__
    return False


def _offline_message(name: str, exc: BaseException) -> str:
    offline = [v for v in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE") if os.environ.get(v)]
    note = f" ({' and '.join(offline)} is set)" if offline else ""
    return (
        f"could not load MTEB task {name!r}: MTEB downloads task data from the Hugging Face "
        f"hub, which needs network access{note}. The download layer said: "
        f"{type(exc).__name__}: {exc}. To run offline, use a local copy in BEIR layout "
        "(a folder with corpus.jsonl, queries.jsonl and qrels/test.tsv) and pass the folder "
        "that holds it with --data-dir (the shared datasets live in ../shared/datasets)."
    )


def import_mteb(purpose: str = _PURPOSE) -> Any:
    """Import ``mteb`` lazily, turning a missing install into :class:`MissingExtraError`."""
    try:
        import mteb
    except ImportError as exc:
        missing = (getattr(exc, "name", None) or "mteb").split(".")[0]
        package = "datasets" if missing == "datasets" else "mteb"
        raise MissingExtraError(package, "mteb", purpose) from exc
    return mteb


def load_mteb_task(
    name: str, *, split: str | None = None, subset: str | None = None
) -> RetrievalTask:
    """Load an MTEB retrieval task by name (``mteb.get_task``) and convert one split.

    Needs the ``mteb`` extra and network access to the Hugging Face hub.

    Args:
        name: the MTEB task name, e.g. ``"SciFact"`` or ``"ArguAna"``.
        split: the evaluation split; by default ``"test"``, or the task's only split. Tasks
            with several (LongEmbed's ``test_256`` ... ``test_32768``) need it named.
        subset: for multilingual tasks, the language subset; by default ``"default"`` or
            the only one.

    Returns:
        The task (``source="mteb"``), with ``exclude_self_hits`` from the task's
        ``ignore_identical_ids``, and pools from ``top_ranked`` for reranking tasks.

    Raises:
        MissingExtraError: ``mteb`` (or ``datasets``) is not installed.
        UnknownNameError: MTEB has no task of that name.
        DatasetError: the data could not be downloaded (offline), the split or subset is
            ambiguous or unknown, or the task is not a text retrieval task.

    """
    mteb = import_mteb()
    try:
        task = mteb.get_task(name)
    except KeyError as exc:
        detail = str(exc.args[0]) if exc.args else ""
        suffix = f": {detail.removeprefix('KeyError: ')}" if detail and detail != name else ""
        raise UnknownNameError(f"unknown MTEB task {name!r}{suffix}") from None
    metadata = task.metadata
    task_type = str(getattr(metadata, "type", "") or "")
    if task_type and "Retriev" not in task_type and "Rerank" not in task_type:
        raise DatasetError(f"MTEB task {name} is a {task_type} task, not a retrieval task")
    chosen_split = _pick(list(metadata.eval_splits), split, "test", "split", name)
    if hasattr(task, "filter_eval_splits"):  # download only the chosen split (mteb >= 1.3x)
        task.filter_eval_splits(eval_splits=[chosen_split])
    try:
        task.load_data()
    except Exception as exc:
        if _is_hub_error(exc):
            raise DatasetError(_offline_message(name, exc)) from exc
        raise
    corpus, queries, qrels, top_ranked, chosen_subset = _extract(task, chosen_split, subset, name)
    dataset_info = dict(getattr(metadata, "dataset", None) or {})
    return mteb_to_task(
        str(getattr(metadata, "name", name)),
        corpus,
        queries,
        qrels,
        bool(getattr(task, "ignore_identical_ids", False)),
        top_ranked=top_ranked,
        metadata={
            "mteb_task": name,
            "mteb_version": str(getattr(mteb, "__version__", "unknown")),
            "dataset_path": dataset_info.get("path"),
            "dataset_revision": dataset_info.get("revision"),
            "split": chosen_split,
            "subset": chosen_subset,
            "main_score": getattr(metadata, "main_score", None),
        },
    )
