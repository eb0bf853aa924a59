"""How a program meets a task: one batch over the whole corpus, or shortlist batches.

*Full mode* hands the program every query and every document at once (``S`` is |Q|×|D|); a
query's candidates are the whole corpus, or its pool for reranking tasks, minus its own id for
tasks flagged ``exclude_self_hits``.

*Shortlist mode* (``--shortlist K``) puts a first stage in front, as in production: dense
cosine over the base embeddings, or BM25, keeps each query's best ``K`` candidates; queries are
then processed in batches of :data:`SHORTLIST_BATCH`, and each batch sees only the union of its
queries' shortlists (the program's ``S`` is B×|union|, with ``ctx.candidates`` marking each
query's own shortlist). Time and memory grow with |Q|·K, not |Q|·|D|. Statistics a program takes
over the batch of queries (a per-column z-score, say) are then taken over that batch.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Literal

import numpy as np
from numpy.typing import NDArray

from embedding_ttc.evaluation.metrics import top_k
from embedding_ttc.evaluation.ranking import TaskRanker

FirstStage = Literal["dense", "bm25"]
SHORTLIST_BATCH = 64
FIRST_STAGE_BLOCK = 1024  # queries scored at once by the first stage (bounds memory)

RowScores = Callable[[NDArray[np.intp]], NDArray[np.float32]]
"""First-stage scores of the given query rows over the whole corpus."""


@dataclass(frozen=True)
class Batch:
    """A set of query rows and document columns handed to a program together.

    Attributes:
        rows: global query indices.
        cols: global document indices (sorted); the program's ``S`` is len(rows)×len(cols).
        candidates: per query of the batch, its candidates as *local* column indices, or
            ``None`` when every query ranks every column.
        whole: True when the batch is every query and every document in natural order (local
            and global indices coincide, and the full ``S`` can be reused).

    """

    rows: NDArray[np.intp]
    cols: NDArray[np.intp]
    candidates: tuple[NDArray[np.intp], ...] | None
    whole: bool = False


def full_batch(ranker: TaskRanker) -> Batch:
    """Every query and every document; pools and self-hit exclusion become candidates."""
    n_q, n_d = len(ranker.task.query_ids), len(ranker.doc_ids)
    cands = None
    if any(c is not None for c in ranker.candidates):
        cands = tuple(ranker.candidate_indices(i) for i in range(n_q))
    return Batch(np.arange(n_q), np.arange(n_d), cands, whole=True)


def shortlists(ranker: TaskRanker, scores: RowScores, k: int) -> list[NDArray[np.intp]]:
    """Each query's best ``k`` candidates under the first stage (global indices, best first)."""
    if k < 1:
        raise ValueError(f"shortlist size must be positive, got {k}")
    n_q = len(ranker.task.query_ids)
    out: list[NDArray[np.intp]] = []
    for start in range(0, n_q, FIRST_STAGE_BLOCK):
        rows = np.arange(start, min(start + FIRST_STAGE_BLOCK, n_q))
        block = scores(rows)
        for i, row in enumerate(rows):
            cand = ranker.candidate_indices(int(row))
            pos = top_k(block[i, cand], ranker.tiebreak[cand], k)
            out.append(cand[pos])
    return out


def shortlist_batches(lists: list[NDArray[np.intp]], size: int | None = None) -> Iterator[Batch]:
    """Group consecutive queries; each batch sees the union of its queries' shortlists."""
    size = size or SHORTLIST_BATCH
    n_batches = max(1, -(-len(lists) // size))
    # Nearly equal batches: no straggler batch of one query, whose per-column statistics
    # (a column z-score over the batch's queries) would be degenerate.
    for rows in np.array_split(np.arange(len(lists)), n_batches):
        cols = np.unique(np.concatenate([lists[r] for r in rows]))
        local = tuple(np.searchsorted(cols, lists[r]).astype(np.intp) for r in rows)
        yield Batch(rows, cols.astype(np.intp), local)
