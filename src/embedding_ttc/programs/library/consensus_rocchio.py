"""*ConsensusRocchio*: Rocchio feedback from a consensus-filtered core, and bidirectional scoring.

Paper App. "Frontier Program Descriptions", *ConsensusRocchio* (c = 6.4): "Pairwise
document-document similarities within the top-quarter of the ranking identify a core cluster
whose members have above-median mutual similarity. Only core-cluster documents contribute to
the positive centroid; outlier top-quarter documents and all bottom-half documents form the
negative centroid. [...] The program also performs full bidirectional scoring, encoding
queries with the passage adapter and documents with the query adapter, to produce
cross-perspective channels."

Rocchio (1971) feedback in the dense space, contrasted by the paper with the uniform top-k
mean of VPRF (Li et al. 2023); all rounds are fused by RRF (Cormack et al. 2009). It builds on
*DiverseDualCtx* (:mod:`~embedding_ttc.programs.library.diverse_dual_ctx`). Choices where the
paper is silent:

* "the ranking" is the cross-round RRF of every *DiverseDualCtx* round;
* a document's mutual similarity is its mean cosine to the *other* top-quarter documents; the
  core is the members at or above the median of those means. "At or above" keeps the core
  non-empty and keeps tied members together: with two close documents and one outlier the
  two tie at the median, and a strict rule would leave no core at all;
* the update is *CrossRoundRRF*'s ``normalize(q + c_pos - c_neg)`` with normalised centroids
  (:func:`~embedding_ttc.programs.primitives.feedback.rocchio` defaults); it makes one round
  with the cosine and sentence MaxSim channels;
* the bidirectional round has two channels, ``Q_passage · D_queryᵀ`` (both perspectives
  swapped) and ``Q_passage · Dᵀ`` (query read as a passage, passage-passage symmetry); the
  documents under ``retrieval.query`` are the backbone's.

Cost: *DiverseDualCtx*'s, plus 1 query-time encode per query (the query under
``retrieval.passage``; none when the encoder's views collapse, as it would be ``Q`` itself).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from embedding_ttc.encoders.base import PASSAGE, QUERY
from embedding_ttc.programs.base import Context, Matrix
from embedding_ttc.programs.library.diverse_dual_ctx import run_diverse_dual_ctx
from embedding_ttc.programs.library.expansion import Pipeline, expansion_recipe
from embedding_ttc.programs.primitives.anchors import HALF, QUARTER, bottom_portion, top_portion
from embedding_ttc.programs.primitives.feedback import centroid, rocchio


def consensus_split(
    D: Matrix, scores_row: NDArray[np.floating], cand: NDArray[np.intp]
) -> tuple[NDArray[np.intp], NDArray[np.intp]]:
    """One query's positive (core) and negative (outliers and bottom half) documents.

    Args:
        D: ``(n_d, d)`` L2-normalised document embeddings.
        scores_row: ``(n_d,)`` the current ranking's scores of the query.
        cand: the query's candidate columns (non-empty).

    Returns:
        ``(core, negatives)`` column indices; ``core`` is never empty.

    """
    top = top_portion(scores_row, cand, QUARTER)
    core = top
    if top.size > 1:
        block = np.asarray(D[top], dtype=np.float64)
        gram = block @ block.T
        mutual = (gram.sum(axis=1) - np.diag(gram)) / (top.size - 1)
        core = top[mutual >= np.median(mutual)]
    outliers = np.setdiff1d(top, core)
    bottom = bottom_portion(scores_row, cand, HALF)
    return core, np.union1d(outliers, np.setdiff1d(bottom, top))


def add_consensus_rounds(p: Pipeline) -> None:
    """Append the consensus-Rocchio round and the bidirectional round.

    Args:
        p: a pipeline holding at least *DiverseDualCtx*'s rounds.

    """
    current = p.fused()
    dim = p.D.shape[1]
    positive = np.zeros((p.n_queries, dim), dtype=np.float32)
    negative = np.zeros((p.n_queries, dim), dtype=np.float32)
    for row in range(p.n_queries):
        cand = p.candidates(row)
        if cand.size == 0:
            continue
        core, negatives = consensus_split(p.D, current[row], cand)
        positive[row] = centroid(p.D, core)
        negative[row] = centroid(p.D, negatives)
    p.add("consensus-rocchio", p.query_channels(rocchio(p.Q, positive, negative)))
    q_passage = p.queries(PASSAGE)
    swapped = (q_passage @ p.documents(QUERY).T).astype(np.float32)
    symmetric = (q_passage @ p.D.T).astype(np.float32)
    p.add("bidirectional", (swapped, symmetric))


def run_consensus_rocchio(p: Pipeline) -> None:
    """The whole program's stages: *DiverseDualCtx*'s, then the consensus rounds."""
    run_diverse_dual_ctx(p)
    add_consensus_rounds(p)


class ConsensusRocchio:
    """Consensus-filtered Rocchio and bidirectional channels on top of *DiverseDualCtx*."""

    name = "ConsensusRocchio"
    # 2: script-aware tokens and sentences (unicode tokenizer; Thai, zero-width splits)
    version = 2
    recipe = expansion_recipe(
        3, 2, "DiverseDualCtx's 2 + the query under retrieval.passage (none if views collapse)"
    )

    def __call__(self, Q: Matrix, D: Matrix, S: Matrix, ctx: Context) -> Matrix:
        """Return the cross-round RRF of every round."""
        p = Pipeline(Q, D, S, ctx)
        run_consensus_rocchio(p)
        return p.fused()
