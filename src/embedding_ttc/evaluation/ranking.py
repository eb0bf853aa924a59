"""Turn a score matrix into per-query rankings and nDCG@10 under a task's rules.

Which documents a query ranks:

* full-corpus tasks: every document;
* pool tasks: only the query's pool (its qrels rows, explicit 0 labels included); scores
  outside the pool are ignored;
* tasks flagged ``exclude_self_hits``: the document whose id equals the query id is removed
  (MTEB's ``ignore_identical_ids``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from embedding_ttc.evaluation.metrics import (
    descending_id_rank,
    ideal_dcg,
    ndcg_at_10,
    top_k,
)
from embedding_ttc.tasks.task import RetrievalTask


@dataclass(frozen=True)
class Ranked:
    """One query's ranking: document ids best first, with their scores."""

    doc_ids: list[str]
    scores: list[float]


class TaskRanker:
    """Precomputed candidates, tie-break order and ideal DCG for one task."""

    def __init__(self, task: RetrievalTask) -> None:
        self.task = task
        self.doc_ids = list(task.doc_ids)
        index = {d: i for i, d in enumerate(self.doc_ids)}
        self.tiebreak = descending_id_rank(self.doc_ids)
        self.candidates: list[NDArray[np.intp] | None] = []
        for qid in task.query_ids:
            if task.pools is not None:
                cand = np.array([index[d] for d in task.pools[qid]], dtype=np.intp)
            else:
                cand = None
            if task.exclude_self_hits and qid in index:
                base = cand if cand is not None else np.arange(len(self.doc_ids))
                cand = base[base != index[qid]]
            self.candidates.append(cand)
        # A query without judgements (a task whose judgements another evaluator holds, as
        # mteb does for the queries it hands a search model) has no ideal DCG: it scores 0.
        self.idcg = np.array(
            [ideal_dcg(list(task.qrels.get(q, {}).values())) for q in task.query_ids]
        )

    def candidate_indices(self, row: int) -> NDArray[np.intp]:
        """Document indices that query ``row`` ranks."""
        cand = self.candidates[row]
        return np.arange(len(self.doc_ids)) if cand is None else cand

    def top_of(self, cand: NDArray[np.intp] | None, values: NDArray[np.floating], k: int) -> Ranked:
        """The best ``k`` of a query's scored candidates.

        Args:
            cand: global document indices that ``values`` score, or ``None`` when ``values``
                is a whole row over the corpus.
            values: the scores.
            k: how many to return.

        """
        if cand is None:
            idx = top_k(values, self.tiebreak, k)
            return Ranked([self.doc_ids[i] for i in idx], [float(values[i]) for i in idx])
        pos = top_k(values, self.tiebreak[cand], k)
        return Ranked([self.doc_ids[i] for i in cand[pos]], [float(values[i]) for i in pos])

    def top(self, scores: NDArray[np.floating], row: int, k: int) -> Ranked:
        """The best ``k`` documents of query ``row`` from its row of a full score matrix."""
        cand = self.candidates[row]
        return self.top_of(cand, scores if cand is None else scores[cand], k)

    def ndcg_rows(
        self, rows: Sequence[tuple[NDArray[np.intp] | None, NDArray[np.floating]]]
    ) -> NDArray[np.float64]:
        """Per-query nDCG@10 from each query's ``(candidates, scores)`` (see :meth:`top_of`)."""
        out = np.zeros(len(self.task.query_ids))
        for row, qid in enumerate(self.task.query_ids):
            if self.idcg[row] <= 0.0:
                continue  # no positive judgement: nDCG is 0 whatever the ranking
            judged = self.task.qrels[qid]
            ranked = self.top_of(*rows[row], 10)
            out[row] = ndcg_at_10([judged.get(d, 0) for d in ranked.doc_ids], self.idcg[row])
        return out

    def ndcg(self, scores: NDArray[np.floating]) -> NDArray[np.float64]:
        """Per-query nDCG@10 of a full ``(n_queries, n_docs)`` score matrix."""
        rows = []
        for row, cand in enumerate(self.candidates):
            rows.append((cand, scores[row] if cand is None else scores[row, cand]))
        return self.ndcg_rows(rows)
