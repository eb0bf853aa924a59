"""The retrieval task record: corpus, queries, graded judgements, optional per-query pools."""

from __future__ import annotations

import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any

import numpy as np


def join_title_text(title: str, text: str) -> str:
    """Join a document's title and text the way MTEB does: ``(title + " " + text).strip()``."""
    return (title + " " + text).strip() if title else text.strip()


@dataclass(frozen=True)
class RetrievalTask:
    """One retrieval task, ready to evaluate.

    Attributes:
        name: task name (the folder name for BEIR tasks).
        doc_ids: corpus ids, in file order.
        doc_titles: titles aligned with ``doc_ids`` (empty strings where none).
        doc_bodies: document texts aligned with ``doc_ids``.
        query_ids: ids of the queries to evaluate (those with judgements), in file order.
        query_texts: query texts aligned with ``query_ids``.
        qrels: ``query id -> {doc id: grade}``; grades are integers, 0 means judged
            non-relevant.
        pools: for pool (reranking) tasks, ``query id -> candidate doc ids``; only those
            candidates are ranked for that query. ``None`` for full-corpus tasks.
        exclude_self_hits: drop a document whose id equals the query id from that query's
            ranking (MTEB's ``ignore_identical_ids``, used for ArguAna).
        suite_role: free-form provenance (``"beir"``, ``"generated"``, ``"mteb"``).
        metadata: extra statistics and provenance (STATS.json contents, generation seed...).
        warnings: counted, human-readable notes about data that was dropped or repaired.

    """

    name: str
    doc_ids: Sequence[str]
    doc_titles: Sequence[str]
    doc_bodies: Sequence[str]
    query_ids: Sequence[str]
    query_texts: Sequence[str]
    qrels: Mapping[str, Mapping[str, int]]
    pools: Mapping[str, Sequence[str]] | None = None
    exclude_self_hits: bool = False
    source: str = "beir"
    metadata: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    warnings: Sequence[str] = ()

    def __post_init__(self) -> None:
        if not (len(self.doc_ids) == len(self.doc_titles) == len(self.doc_bodies)):
            raise ValueError(f"task {self.name}: corpus columns differ in length")
        if len(self.query_ids) != len(self.query_texts):
            raise ValueError(f"task {self.name}: query columns differ in length")

    @property
    def doc_texts(self) -> list[str]:
        """Document texts as the encoder sees them (title and text joined as MTEB joins them)."""
        return [
            join_title_text(t, b) for t, b in zip(self.doc_titles, self.doc_bodies, strict=True)
        ]

    @property
    def is_pool(self) -> bool:
        """True for reranking tasks where each query ranks only its own pool."""
        return self.pools is not None

    @property
    def n_docs(self) -> int:
        """Number of documents in the corpus."""
        return len(self.doc_ids)

    @property
    def n_queries(self) -> int:
        """Number of evaluated queries."""
        return len(self.query_ids)

    def stats(self) -> dict[str, Any]:
        """Counts for listings: documents, queries, judgements, mean words per document."""
        words = [len(t.split()) for t in self.doc_bodies]
        return {
            "task": self.name,
            "n_docs": self.n_docs,
            "n_queries": self.n_queries,
            "n_qrels": sum(len(v) for v in self.qrels.values()),
            "n_pos_qrels": sum(1 for v in self.qrels.values() for g in v.values() if g > 0),
            "mean_doc_words": round(sum(words) / len(words), 1) if words else 0.0,
            "pool": self.is_pool,
            "source": self.source,
        }


def sample_queries(task: RetrievalTask, n: int) -> RetrievalTask:
    """The task restricted to a seeded sample of ``n`` of its queries (all when ``n`` ≥ |Q|).

    The sample is drawn without replacement by a generator seeded from the task's name alone
    (CRC-32), so it is the same for every encoder, program and run; the queries keep their
    file order, and judgements and pools are restricted to them. ``metadata["query_sample"]``
    records the size.

    Raises:
        ValueError: if ``n`` is below 1.

    """
    if n < 1:
        raise ValueError(f"a query sample holds at least one query, got {n}")
    if n >= task.n_queries:
        return task
    rng = np.random.default_rng(zlib.crc32(task.name.encode("utf-8")))
    keep = np.sort(rng.choice(task.n_queries, size=n, replace=False))
    sampled = restrict_queries(task, [task.query_ids[i] for i in keep])
    return replace(sampled, metadata=MappingProxyType({**task.metadata, "query_sample": n}))


def restrict_queries(task: RetrievalTask, query_ids: Sequence[str]) -> RetrievalTask:
    """``task`` with only ``query_ids`` (in the task's order), their judgements and pools."""
    chosen = set(query_ids)
    rows = [i for i, q in enumerate(task.query_ids) if q in chosen]
    ids = [task.query_ids[i] for i in rows]
    return replace(
        task,
        query_ids=ids,
        query_texts=[task.query_texts[i] for i in rows],
        qrels={q: v for q, v in task.qrels.items() if q in chosen},
        pools=None if task.pools is None else {q: task.pools[q] for q in ids},
    )
