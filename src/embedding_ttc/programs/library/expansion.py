"""Rounds, the cross-round backbone and anchored query expansion for the expansion programs.

The frontier programs above c = 3.9 (paper App. "Frontier Program Descriptions":
*DiverseDualCtx*, *ConsensusRocchio*, *NegContrastive*, *MomentumProg*, *GraphCentrality*,
*FisherStability*) each build on the channels of the cheaper ones. They share one structure,
kept here as a :class:`Pipeline`: a list of scoring *rounds*, each a ranking of every query's
candidates, fused by cross-round reciprocal rank fusion (Cormack, Clarke & Buettcher 2009;
the "cross-round RRF" of *CrossRoundRRF*). A program is the backbone of :func:`add_backbone`
followed by its predecessors' stages and its own; every stage reads the current fused ranking
(:meth:`Pipeline.fused`) and appends rounds.

Choices where the paper is silent (all global, never tuned per task):

* **Rounds and channels.** A round holds one or more channels (score matrices); a
  multi-channel round's ranking is the RRF of its channels, and the program's output is the
  RRF of the rounds' rankings, so a round counts once however many channels it has. A new
  query vector (a refined or expanded query) makes a two-channel round: its cosine with the
  documents and its sentence MaxSim (ColBERT's operator at sentence level, Khattab & Zaharia
  2020), the two embedding channels that cost nothing more once the sentences are encoded.
* **Backbone** (:func:`add_backbone`), our reading of *CrossRoundRRF*'s rounds on a lighter
  channel set: round 1 fuses the cosine ``S``, sentence MaxSim (*SentMaxSim*), the reversed
  perspective ``Q · D_queryᵀ`` with documents under ``retrieval.query`` (*BidirZScore*), BM25
  and word-bigram overlap (*LexicalHybridRRF*); round 2 is Rocchio (1971)
  ``normalize(q + d_pos - d_neg)`` with centroids of the candidates above and below the
  per-query median round-1 score; round 3 the query residual ``q - proj(q, d_pos)``, which
  falls back to round 1 when its norm is below :data:`RESIDUAL_MIN_NORM` (both as in the
  paper's *CrossRoundRRF*).
* **Anchor text.** An anchor contributes its best-matching sentence: the sentence of the
  document (:func:`~embedding_ttc.programs.primitives.chunking.split_sentences`, first
  :data:`~embedding_ttc.programs.primitives.chunking.MAX_CHUNKS_PER_DOC` per document) with
  the highest cosine to the *original* query embedding. The expanded text is the query, a
  space, and the sentence(s), encoded under the round's view (one query-time encode each).
* **Adaptive gate** (:meth:`Pipeline.add_gated`). *DiverseDualCtx* fuses its rounds "with
  an adaptive gate"; we gate every anchored expansion round per query: the round is admitted
  when its top-ranked candidate lies in the top quarter of the ranking its anchors were
  chosen from; otherwise that query's round falls back to that reference ranking, as
  *CrossRoundRRF*'s residual round falls back to round 1. An expansion whose best document the
  consensus so far places outside its top quarter has drifted (typically toward a weak
  anchor), and the fallback keeps such a round from voting. The rule is rank-based, so it
  means the same for every encoder's score scale, and it keeps the number of rounds per query
  constant, so RRF sums stay comparable across queries.
* **Candidates.** Anchors, centroids and statistics are taken over each query's candidates;
  BM25's corpus statistics (IDF, average length) over every document the program is handed,
  as in LexicalHybridRRF (:mod:`~embedding_ttc.programs.library.hybrid_evidence`): they are
  index-time statistics of the corpus, the same ones a deployed index stores.
* **Collapsed views.** When the encoder's views share one realisation
  (``ctx.views_collapsed``), an encode that would repeat one already made (documents under
  ``retrieval.query``, queries under ``retrieval.passage``, one expansion under several views)
  reuses it. This changes the cost only, never the output: the same text under the same
  realisation has the same embedding.

Cost: index-time, the sentences of every document and (unless the views collapse) every
document under ``retrieval.query``; the expansions are query-time, one encode per query each.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from embedding_ttc.encoders.base import PASSAGE, QUERY
from embedding_ttc.programs.base import Context, Matrix
from embedding_ttc.programs.library.hybrid_evidence import hybrid_lexical
from embedding_ttc.programs.primitives.anchors import QUARTER, top_portion
from embedding_ttc.programs.primitives.channels import (
    ChunkChannel,
    best_chunk,
    candidates_of,
    encode_chunks,
    encode_documents,
    expand_queries,
    mask_for,
)
from embedding_ttc.programs.primitives.chunking import split_sentences
from embedding_ttc.programs.primitives.feedback import (
    NORM_EPS,
    centroid,
    query_residual,
    rocchio,
)
from embedding_ttc.programs.primitives.late import maxsim
from embedding_ttc.programs.primitives.scores import Mask, median_split, rrf, top_k_indices
from embedding_ttc.programs.recipe import Artifact, Recipe

RESIDUAL_MIN_NORM: float = 0.1
"""*CrossRoundRRF*'s fallback: a query residual shorter than this leaves round 3 to round 1."""

CONTRAST_MIN_NORM: float = RESIDUAL_MIN_NORM
"""A contrast ``q_pos - q_neg`` shorter than this keeps ``q_pos`` (cosine above 0.995)."""

GATE_PARTS: int = QUARTER
"""The adaptive gate admits a round whose top candidate is in this top portion (a quarter)."""

BASE_ROUND = "base"
"""Round 1 of the backbone: cosine, sentence MaxSim, reversed perspective, BM25, bigrams."""

ROCCHIO_ROUND = "rocchio"
"""Round 2 of the backbone: Rocchio with median-split centroids (the first refinement)."""

RESIDUAL_ROUND = "residual"
"""Round 3 of the backbone: the query residual, falling back to round 1."""

BACKBONE_ARTIFACTS: tuple[Artifact, ...] = (
    Artifact("sentence", PASSAGE),
    Artifact("document", QUERY, unless_collapsed=True),
)
"""The backbone's index-time encodes: sentences, and documents under ``retrieval.query``."""


def expansion_recipe(query_encodes: int, query_encodes_collapsed: int, note: str) -> Recipe:
    """How an expansion program deploys: the backbone's encodes stored, its expansions live.

    Its lexical channels and anchors are taken over each query's candidates, so a deployed
    query is one program call (``batch="candidates"``).
    """
    return Recipe(
        artifacts=BACKBONE_ARTIFACTS,
        lexical=True,
        query_encodes=query_encodes,
        query_encodes_collapsed=query_encodes_collapsed,
        batch="candidates",
        note=note,
    )


@dataclass(frozen=True, eq=False)  # array fields have no boolean equality
class Round:
    """One scoring round: its channels and the ranking scores they fuse to.

    Attributes:
        name: a label (unique within a pipeline).
        channels: the round's score matrices, each ``(n_q, n_d)``.
        scores: the round's ranking scores: the single channel, or the RRF of several.

    """

    name: str
    channels: tuple[Matrix, ...]
    scores: Matrix


class Pipeline:
    """The rounds of one program call and the encodings its stages share.

    Built per call and discarded afterwards; it holds ``Q``, ``D``, ``S`` and ``ctx`` without
    modifying them. Encodings are made once, on first use.

    Attributes:
        Q: ``(n_q, d)`` query embeddings under ``retrieval.query``.
        D: ``(n_d, d)`` document embeddings under ``retrieval.passage``.
        S: ``(n_q, n_d)`` cosine matrix ``Q Dᵀ``.
        ctx: the program context.
        mask: the candidate mask (``None`` when every query ranks every document).
        rounds: the rounds so far, in order.
        expansions: expanded query matrices a later stage may reuse, by name.

    """

    def __init__(self, Q: Matrix, D: Matrix, S: Matrix, ctx: Context) -> None:
        self.Q = Q
        self.D = D
        self.S = S
        self.ctx = ctx
        self.mask: Mask | None = mask_for(ctx, S)
        self.rounds: list[Round] = []
        self.expansions: dict[str, Matrix] = {}
        self._sentences: ChunkChannel | None = None
        self._documents: dict[str, Matrix] = {PASSAGE: D}
        self._queries: dict[str, Matrix] = {QUERY: Q}

    @property
    def n_queries(self) -> int:
        """Number of queries (rows)."""
        return int(self.S.shape[0])

    @property
    def n_docs(self) -> int:
        """Number of documents (columns)."""
        return int(self.S.shape[1])

    def candidates(self, row: int) -> NDArray[np.intp]:
        """The columns query ``row`` ranks."""
        return candidates_of(self.ctx, row, self.n_docs)

    # --- encodings -------------------------------------------------------------------------

    @property
    def sentences(self) -> ChunkChannel:
        """Every document's sentences under ``retrieval.passage`` (index-time, encoded once)."""
        if self._sentences is None:
            self._sentences = encode_chunks(self.ctx, split_sentences)
        return self._sentences

    def documents(self, view: str) -> Matrix:
        """The documents under ``view`` (index-time; ``D`` itself when the views collapse)."""
        if view not in self._documents:
            self._documents[view] = (
                self.D if self.ctx.views_collapsed else encode_documents(self.ctx, view)
            )
        return self._documents[view]

    def queries(self, view: str) -> Matrix:
        """The queries under ``view`` (query-time; ``Q`` itself when the views collapse)."""
        if view not in self._queries:
            self._queries[view] = (
                self.Q
                if self.ctx.views_collapsed
                else self.ctx.encode_fn(list(self.ctx.query_texts), view)
            )
        return self._queries[view]

    def anchors(self, select: Callable[[int, NDArray[np.intp]], Iterable[int]]) -> list[list[int]]:
        """Per query, the anchor columns ``select(row, candidates)`` picks.

        A query without candidates gets no anchor (its expansion is the query alone).
        """
        out: list[list[int]] = []
        for row in range(self.n_queries):
            cand = self.candidates(row)
            out.append([int(a) for a in select(row, cand)] if cand.size else [])
        return out

    def best_sentences(self, anchors: Sequence[Iterable[int]]) -> list[str]:
        """Per query, the best-matching sentence of each of its anchors, joined by spaces.

        Args:
            anchors: per query row, its anchor document columns (candidates), in order.

        Returns:
            One context text per query.

        """
        return [
            " ".join(best_chunk(self.sentences, self.Q[row], int(doc)) for doc in docs)
            for row, docs in enumerate(anchors)
        ]

    def expand(self, anchors: Sequence[Iterable[int]], view: str = QUERY) -> Matrix:
        """Encode each query with its anchors' best sentences under ``view`` (query-time)."""
        return expand_queries(self.ctx, self.best_sentences(anchors), view)

    def expand_views(
        self, anchors: Sequence[Iterable[int]], views: Sequence[str]
    ) -> Mapping[str, Matrix]:
        """The same expansion under several views (encoded once when the views collapse)."""
        contexts = self.best_sentences(anchors)
        if self.ctx.views_collapsed:
            shared = expand_queries(self.ctx, contexts, views[0])
            return dict.fromkeys(views, shared)
        return {view: expand_queries(self.ctx, contexts, view) for view in views}

    # --- channels and rounds ---------------------------------------------------------------

    def query_channels(self, queries: Matrix) -> tuple[Matrix, ...]:
        """A query matrix's two embedding channels: document cosine and sentence MaxSim."""
        q = np.asarray(queries, dtype=np.float32)
        channel = self.sentences
        dense: Matrix = (q @ self.D.T).astype(np.float32)
        late = maxsim(q, channel.embeddings, channel.chunks.owner, self.n_docs, mask=self.mask)
        return dense, late

    def add(
        self,
        name: str,
        channels: Sequence[Matrix],
        *,
        fallback_rows: NDArray[np.bool_] | None = None,
        fallback: Matrix | None = None,
    ) -> Round:
        """Append a round; rows in ``fallback_rows`` take the ``fallback`` ranking instead.

        Args:
            name: the round's label.
            channels: one or more ``(n_q, n_d)`` score matrices.
            fallback_rows: ``(n_q,)`` booleans, rows whose channels are replaced.
            fallback: ``(n_q, n_d)`` scores used for those rows (required with them).

        Returns:
            The new round.

        Raises:
            ValueError: if only one of ``fallback_rows`` and ``fallback`` is given.

        """
        if (fallback_rows is None) != (fallback is None):
            raise ValueError("fallback_rows and fallback go together")
        chans = tuple(np.asarray(c, dtype=np.float32) for c in channels)
        if fallback_rows is not None and fallback is not None and fallback_rows.any():
            rows = fallback_rows[:, None]
            chans = tuple(np.where(rows, fallback, c).astype(np.float32) for c in chans)
        scores = chans[0] if len(chans) == 1 else rrf(chans, mask=self.mask)
        new = Round(name, chans, scores)
        self.rounds.append(new)
        return new

    def add_gated(self, name: str, channels: Sequence[Matrix], reference: Matrix) -> Round:
        """Append an expansion round behind the adaptive gate (module docstring).

        Args:
            name: the round's label.
            channels: the round's score matrices.
            reference: the ranking the round's anchors came from (scores, higher first).

        Returns:
            The new round (rejected rows carry ``reference``).

        """
        chans = tuple(np.asarray(c, dtype=np.float32) for c in channels)
        scores = chans[0] if len(chans) == 1 else rrf(chans, mask=self.mask)
        tops = top_k_indices(scores, 1, self.mask)
        rejected = np.zeros(self.n_queries, dtype=np.bool_)
        for row, top in enumerate(tops):
            if top.size == 0:  # no candidates: nothing to gate
                continue
            admitted = top_portion(reference[row], self.candidates(row), GATE_PARTS)
            rejected[row] = int(top[0]) not in admitted
        return self.add(name, chans, fallback_rows=rejected, fallback=reference)

    def round(self, name: str) -> Round:
        """The round called ``name``."""
        for r in self.rounds:
            if r.name == name:
                return r
        raise KeyError(f"no round {name!r}; rounds: {[r.name for r in self.rounds]}")

    def channels(self) -> list[Matrix]:
        """Every channel of every round so far, in order."""
        return [c for r in self.rounds for c in r.channels]

    def fused(self) -> Matrix:
        """Cross-round RRF of the rounds so far (0 at non-candidates)."""
        return rrf([r.scores for r in self.rounds], mask=self.mask)


def unit_rows(X: NDArray[np.floating], fallback: Matrix) -> Matrix:
    """L2-normalise each row of ``X``; a row of (near) zero norm takes ``fallback``'s row."""
    x = np.asarray(X, dtype=np.float64)
    norm = np.linalg.norm(x, axis=1, keepdims=True)
    ok = norm > NORM_EPS
    out = np.where(ok, x / np.where(ok, norm, 1.0), np.asarray(fallback, dtype=np.float64))
    return out.astype(np.float32)


def contrast(positive: Matrix, negative: Matrix) -> Matrix:
    """``normalize(q_pos - q_neg)`` per query (*NegContrastive*); ``q_pos`` where they nearly agree.

    When ``||q_pos - q_neg|| < CONTRAST_MIN_NORM`` the two expansions are nearly the same
    vector (e.g. both texts truncated to the same query prefix by the encoder's input length,
    or a single candidate), and normalising their difference would blow encoder noise up to a
    unit query; that query keeps ``q_pos`` instead, as *CrossRoundRRF*'s short residual falls
    back to round 1.
    """
    pos = np.asarray(positive, dtype=np.float64)
    diff = pos - np.asarray(negative, dtype=np.float64)
    short = np.linalg.norm(diff, axis=1, keepdims=True) < CONTRAST_MIN_NORM
    return unit_rows(np.where(short, pos, diff), positive)


def side_centroids(D: Matrix, side: Mask) -> Matrix:
    """Per query, the normalised centroid of the documents marked in its row of ``side``."""
    if side.shape[0] == 0:
        return np.zeros((0, D.shape[1]), dtype=np.float32)
    return np.stack([centroid(D, side[row]) for row in range(side.shape[0])]).astype(np.float32)


def add_backbone(p: Pipeline) -> None:
    """Append the backbone's three rounds (module docstring): base, Rocchio, residual.

    Args:
        p: the pipeline (normally empty).

    """
    bm25, bigram = hybrid_lexical(p.ctx)
    _, late = p.query_channels(p.Q)
    dense = p.S.astype(np.float32)  # a copy of the cosine S
    reverse = (p.Q @ p.documents(QUERY).T).astype(np.float32)
    base = p.add(BASE_ROUND, (dense, late, reverse, bm25, bigram))
    above, below = median_split(base.scores, p.mask)
    positive, negative = side_centroids(p.D, above), side_centroids(p.D, below)
    p.add(ROCCHIO_ROUND, p.query_channels(rocchio(p.Q, positive, negative)))
    residual = query_residual(p.Q, positive)
    short = np.linalg.norm(residual.astype(np.float64), axis=1) < RESIDUAL_MIN_NORM
    p.add(
        RESIDUAL_ROUND,
        p.query_channels(unit_rows(residual, p.Q)),
        fallback_rows=short,
        fallback=base.scores,
    )
