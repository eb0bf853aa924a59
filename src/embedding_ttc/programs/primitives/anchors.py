"""Anchor documents for contextual query expansion, chosen over one query's candidates.

The expansion programs of the paper concatenate the query with text from a few *anchor*
documents of a preliminary ranking and re-encode it: *DiverseDualCtx* (App. A.7: dominant and
diverse anchors), *NegContrastive* (A.9: bottom-ranked anchor), *MomentumProg* (A.10: anchors
by rank momentum) and *GraphCentrality* (A.11: central anchor and hardest negative). Each
selector here takes one query's score row and its candidates (``Context.candidates[i]``, or
``None`` for the whole corpus, as in the candidate mask convention of
``embedding_ttc.programs.primitives.scores``) and returns a column index.

Conventions shared by every selector:

* the ranking is that of ``scores``: higher score first, ties by the lower column index;
* the *top half* / *top quarter* of ``n`` candidates are its best ``floor(n / 2)`` /
  ``floor(n / 4)`` documents, and the *bottom half* its worst ``floor(n / 2)``, always at
  least one document (:func:`portion_size`). Rounding down keeps the top and bottom halves
  disjoint whenever there are two or more candidates; with one candidate every portion is
  that document;
* when several documents tie on a selector's criterion, the better-ranked one wins;
* ``D`` holds L2-normalised document embeddings, so a dot product is a cosine;
* a query without candidates is an error (there is nothing to anchor on).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from embedding_ttc.programs.primitives.scores import row_bottom_k, row_candidates, row_top_k

HALF: int = 2
"""``parts`` argument of :func:`portion_size` for a top or bottom half."""

QUARTER: int = 4
"""``parts`` argument of :func:`portion_size` for a top or bottom quarter."""


#: Centralities closer than this are ties (rounding of equal sums over duplicate documents).
_TIE_EPS = 1e-12


def portion_size(n_candidates: int, parts: int) -> int:
    """Documents in the top (or bottom) ``1 / parts`` of ``n_candidates``: ``max(1, n // parts)``.

    Args:
        n_candidates: number of candidates, ``>= 1``.
        parts: ``HALF``, ``QUARTER`` or any positive divisor.

    Returns:
        ``floor(n_candidates / parts)``, but at least 1.

    Raises:
        ValueError: if ``n_candidates < 1`` or ``parts < 1``.

    """
    if n_candidates < 1 or parts < 1:
        raise ValueError(f"need n_candidates >= 1 and parts >= 1, got {n_candidates}, {parts}")
    return max(1, n_candidates // parts)


def top_portion(scores_row: ArrayLike, cand: ArrayLike | None, parts: int) -> NDArray[np.intp]:
    """The top ``1 / parts`` of the query's candidates, best first (see :func:`portion_size`).

    Args:
        scores_row: ``(n_d,)`` scores of one query (finite at candidates).
        cand: the query's candidate columns; ``None`` = every document.
        parts: ``HALF`` or ``QUARTER`` (any positive integer).

    Returns:
        Column indices, best first.

    """
    row = np.asarray(scores_row, dtype=np.float64)
    idx = _candidates(cand, row.shape[0])
    return row_top_k(row, portion_size(idx.size, parts), idx)


def bottom_portion(scores_row: ArrayLike, cand: ArrayLike | None, parts: int) -> NDArray[np.intp]:
    """The bottom ``1 / parts`` of the query's candidates, worst first.

    Args:
        scores_row: ``(n_d,)`` scores of one query (finite at candidates).
        cand: the query's candidate columns; ``None`` = every document.
        parts: ``HALF`` or ``QUARTER`` (any positive integer).

    Returns:
        Column indices, worst first (the ranking's tail read backwards).

    """
    row = np.asarray(scores_row, dtype=np.float64)
    idx = _candidates(cand, row.shape[0])
    return row_bottom_k(row, portion_size(idx.size, parts), idx)


def dominant_anchor(scores_row: ArrayLike, cand: ArrayLike | None) -> int:
    """The top-ranked candidate (*DiverseDualCtx*'s dominant anchor, paper App. A.7).

    Args:
        scores_row: ``(n_d,)`` scores of one query.
        cand: the query's candidate columns; ``None`` = every document.

    Returns:
        A column index.

    """
    row = np.asarray(scores_row, dtype=np.float64)
    return int(row_top_k(row, 1, _candidates(cand, row.shape[0]))[0])


def bottom_anchor(scores_row: ArrayLike, cand: ArrayLike | None) -> int:
    """The lowest-ranked candidate (*NegContrastive*'s negative anchor, paper App. A.9).

    Among tied lowest scores it is the one with the highest column index, the last document
    of the ranking.

    Args:
        scores_row: ``(n_d,)`` scores of one query.
        cand: the query's candidate columns; ``None`` = every document.

    Returns:
        A column index.

    """
    row = np.asarray(scores_row, dtype=np.float64)
    return int(row_bottom_k(row, 1, _candidates(cand, row.shape[0]))[0])


def diverse_anchor(
    D: ArrayLike, scores_row: ArrayLike, cand: ArrayLike | None, dominant: int
) -> int:
    """The top-half document least similar to the dominant anchor (paper App. A.7).

    "The top-half document most dissimilar to the dominant anchor by cosine distance": the
    argmin of ``D[j] · D[dominant]`` over the top half with ``dominant`` itself left out.
    When the top half holds only the dominant anchor (fewer than four candidates), there is
    no second choice and the dominant anchor is returned.

    Args:
        D: ``(n_d, d)`` L2-normalised document embeddings.
        scores_row: ``(n_d,)`` scores of one query.
        cand: the query's candidate columns; ``None`` = every document.
        dominant: column of the dominant anchor (normally :func:`dominant_anchor`).

    Returns:
        A column index.

    """
    docs = _docs(D, scores_row)
    top = top_portion(scores_row, cand, HALF)
    others = top[top != dominant]
    if others.size == 0:
        return int(dominant)
    sims = _rows64(docs, others) @ _rows64(docs, np.array([dominant]))[0]
    return int(others[np.argmin(sims)])  # argmin takes the first, i.e. best-ranked, tie


def central_anchor(D: ArrayLike, scores_row: ArrayLike, cand: ArrayLike | None) -> int:
    """The most central top-quarter document (*GraphCentrality*'s positive, paper App. A.11).

    Centrality is the mean cosine of a document to the *other* top-quarter documents (the
    weighted degree in the top-quarter similarity graph, self-loops excluded). Centralities
    within ``_TIE_EPS`` (float rounding) of the largest tie, and the best-ranked of them is
    returned. A top quarter of one document returns that document.

    Args:
        D: ``(n_d, d)`` L2-normalised document embeddings.
        scores_row: ``(n_d,)`` scores of one query.
        cand: the query's candidate columns; ``None`` = every document.

    Returns:
        A column index.

    """
    docs = _docs(D, scores_row)
    top = top_portion(scores_row, cand, QUARTER)
    if top.size == 1:
        return int(top[0])
    block = _rows64(docs, top)
    # Row sums of the Gram matrix without forming it: b_i · Σ_j b_j, less the self-loop b_i · b_i
    # (O(n·d) instead of O(n²·d); the top quarter of a full corpus is thousands of rows).
    degree = block @ block.sum(axis=0) - np.einsum("ij,ij->i", block, block)
    centrality = degree / (top.size - 1)
    # Duplicate documents are equally central; rounding must not pick among them, so values
    # within _TIE_EPS of the best tie, and the first (best-ranked) of them wins.
    best = np.flatnonzero(centrality >= centrality.max() - _TIE_EPS)
    return int(top[best[0]])


def hardest_negative(D: ArrayLike, scores_row: ArrayLike, cand: ArrayLike | None) -> int:
    """The bottom-half document closest to the top-quarter centroid (paper App. A.11).

    Closeness is the dot product with the mean of the top-quarter embeddings, which orders
    documents exactly as the cosine with the normalised centroid does.

    Args:
        D: ``(n_d, d)`` L2-normalised document embeddings.
        scores_row: ``(n_d,)`` scores of one query.
        cand: the query's candidate columns; ``None`` = every document.

    Returns:
        A column index (the single candidate when there is only one).

    """
    docs = _docs(D, scores_row)
    centre = _rows64(docs, top_portion(scores_row, cand, QUARTER)).mean(axis=0)
    bottom = bottom_portion(scores_row, cand, HALF)[::-1]  # best-ranked first, for the ties
    return int(bottom[np.argmax(_rows64(docs, bottom) @ centre)])


def momentum_anchors(
    rank_before: ArrayLike, rank_after: ArrayLike, cand: ArrayLike | None
) -> tuple[int, int]:
    """Anchors by rank momentum (*MomentumProg*, paper App. A.10).

    "The positive anchor is the top-half document whose rank improved most between the
    baseline and the first refinement round; the negative anchor is the bottom-half document
    whose rank dropped most." The halves are those of the refined ranking ``rank_after``;
    the positive maximises ``rank_before - rank_after`` over its top half and the negative
    maximises ``rank_after - rank_before`` over its bottom half, ties going to the document
    ranked better in ``rank_after``. The two coincide only for a single candidate.

    Args:
        rank_before: ``(n_d,)`` 1-based ranks of the baseline round (a row of
            ``scores.ranks``), finite at candidates.
        rank_after: ``(n_d,)`` ranks of the first refinement round, finite at candidates.
        cand: the query's candidate columns; ``None`` = every document.

    Returns:
        ``(positive, negative)`` column indices.

    Raises:
        ValueError: if the rows differ in shape or a candidate's rank is not finite.

    """
    before = np.asarray(rank_before, dtype=np.float64)
    after = np.asarray(rank_after, dtype=np.float64)
    if before.ndim != 1 or before.shape != after.shape:
        raise ValueError(f"rank rows must be 1-D of one shape, got {before.shape}, {after.shape}")
    idx = _candidates(cand, after.shape[0])
    if not (np.isfinite(before[idx]).all() and np.isfinite(after[idx]).all()):
        raise ValueError("every candidate needs a finite rank in both rounds")
    top = top_portion(-after, idx, HALF)
    bottom = bottom_portion(-after, idx, HALF)[::-1]  # best-ranked first, for the ties
    positive = top[np.argmax(before[top] - after[top])]
    negative = bottom[np.argmax(after[bottom] - before[bottom])]
    return int(positive), int(negative)


def _candidates(cand: ArrayLike | None, n_d: int) -> NDArray[np.intp]:
    idx = row_candidates(cand, n_d)
    if idx.size == 0:
        raise ValueError("the query has no candidates to choose an anchor from")
    return idx


def _docs(D: ArrayLike, scores_row: ArrayLike) -> NDArray[np.floating[Any]]:
    # Not converted as a whole: only selected rows are cast (by ``_rows64``), so a per-query
    # call never copies a large corpus.
    docs = np.asarray(D)
    if docs.dtype.kind != "f":
        docs = docs.astype(np.float64)
    n_d = np.shape(scores_row)[0] if np.ndim(scores_row) == 1 else -1
    if docs.ndim != 2 or docs.shape[0] != n_d:
        raise ValueError(f"D must be (n_d, d) with n_d = len(scores_row), got {docs.shape}")
    return docs


def _rows64(docs: NDArray[np.floating[Any]], rows: NDArray[np.intp]) -> NDArray[np.float64]:
    return docs[rows].astype(np.float64)
