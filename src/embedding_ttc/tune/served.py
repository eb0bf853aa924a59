"""Served time, measured as a user is served: each program's index, one query at a time.

The pick rule's time bar is about what a user waits for, so it is measured on the deployed
path itself. Each program gets an index of the task's corpus (:meth:`Index.build
<embedding_ttc.deploy.index.Index.build>`: a library program by name, a program file in the
warm sandbox, both drawing on what the index stores), and a :class:`~embedding_ttc.deploy.
reranker.Reranker` over the uncached encoder. For each sampled query, every program reranks the
query's dense top ``shortlist`` in turn, the order rotating so that each leads equally often;
a program's served seconds are the median over the queries. P0 is measured in the same loop,
so the ratios compare programs under the same load.
"""

from __future__ import annotations

import statistics
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from embedding_ttc.deploy.corpus import Document
from embedding_ttc.deploy.index import Index
from embedding_ttc.deploy.reranker import Reranker
from embedding_ttc.encoders.base import PASSAGE, QUERY, Encoder
from embedding_ttc.program_files.program_file import ProgramFile
from embedding_ttc.tasks.task import RetrievalTask

SERVED_QUERIES = 20
"""How many queries each program's served time is the median of."""

Deployable = str | ProgramFile


def dense_shortlists(
    task: RetrievalTask, encoder: Encoder, queries: Sequence[int], shortlist: int
) -> list[list[str]]:
    """Each query's dense top ``shortlist`` document ids (what ``/v1/rerank`` is sent)."""
    D = encoder.encode(task.doc_texts, view=PASSAGE)
    Q = encoder.encode([task.query_texts[i] for i in queries], view=QUERY)
    out = []
    for row in Q @ D.T:
        top = np.argsort(-row, kind="stable")[:shortlist]
        out.append([task.doc_ids[j] for j in top])
    return out


def served_seconds(
    programs: Sequence[tuple[str, Deployable]],
    task: RetrievalTask,
    *,
    index_encoder: Encoder,
    query_encoder: Encoder,
    shortlist: int,
    queries: int = SERVED_QUERIES,
    progress: Callable[[str], None] | None = None,
) -> dict[str, float]:
    """Each program's median seconds to rerank one query's dense top ``shortlist``, by label.

    Args:
        programs: ``(label, program name or program file)`` pairs.
        task: the task whose corpus is indexed and whose queries are served.
        index_encoder: the encoder the indexes are built with (usually cached).
        query_encoder: the encoder queries are served with (uncached: as a service encodes).
        shortlist: the candidates per query.
        queries: how many of the task's queries are served (the first ones, in file order).
        progress: called with a label as each index is built.

    """
    sample = list(range(min(queries, task.n_queries)))
    lists = dense_shortlists(task, index_encoder, sample, shortlist)
    docs = [
        Document(i, t, b)
        for i, t, b in zip(task.doc_ids, task.doc_titles, task.doc_bodies, strict=True)
    ]
    times: dict[str, list[float]] = {label: [] for label, _ in programs}
    with tempfile.TemporaryDirectory(prefix="tune-served-") as tmp:
        rerankers = []
        for k, (label, program) in enumerate(programs):
            index = Index.build(
                Path(tmp) / f"index-{k}",
                docs,
                encoder=index_encoder,
                program=program,
                reference_queries=list(task.query_texts[:64]),
            )
            reranker = Reranker(index, query_encoder)
            reranker.rerank(task.query_texts[0], lists[0], k=10)  # warm: model, child, caches
            rerankers.append((label, reranker))
            if progress is not None:
                progress(label)
        for n, i in enumerate(sample):
            turn = n % len(rerankers)
            for label, reranker in rerankers[turn:] + rerankers[:turn]:
                t0 = time.perf_counter()
                reranker.rerank(task.query_texts[i], lists[n], k=10)
                times[label].append(time.perf_counter() - t0)
    return {label: statistics.median(values) for label, values in times.items()}
