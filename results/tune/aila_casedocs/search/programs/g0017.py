"""Structural program: dense + pair_maxsim + bm25 by a convex combination (weight 0.4 shared by the channels after the first), 0 feedback rounds.

Novelty: Relative to g0007, fuses by a convex combination (weight 0.4 shared by the channels after the first) instead of reciprocal rank fusion; switches BM25 to column z-scores (was row z-scores); switches MaxSim over sentence pairs to column-then-row z-scores (was z-scores over the dense top-K) [genome dense:row+pair_maxsim:both+bm25:col|convex:0.4|0].
Hypothesis: Fusing the dense cosine S, MaxSim over sentence pairs and BM25 by a convex combination (weight 0.4 shared by the channels after the first) should raise nDCG@10 on every task, because the best-matching part of a long document carries the evidence that one pooled vector dilutes; BM25 rewards exact rare terms (names, numbers) that embeddings blur.
Parent: g0007
Genome: {"channels": {"dense": "row", "pair_maxsim": "both", "bm25": "col"}, "fusion": "convex", "rounds": 0, "refine": "rocchio", "share": 0.4}
"""

import numpy as np

from embedding_ttc.programs.primitives.chunking import (
    MAX_CHUNKS_PER_DOC,
    chunk_documents,
    sentence_pairs,
    split_sentences,
)
from embedding_ttc.programs.primitives.late import maxsim
from embedding_ttc.programs.primitives.lexical import BM25
from embedding_ttc.programs.primitives.scores import candidate_mask, zscore_cols, zscore_rows

FUSION_SHARE = 0.4


def _sentence_pairs(text):
    """Consecutive sentence pairs of a text."""
    return sentence_pairs(split_sentences(text))


def program(Q, D, S, ctx):
    n_q, n_d = S.shape
    mask = candidate_mask(n_q, n_d, ctx.candidates)
    pairs = chunk_documents(
        ctx.doc_texts, _sentence_pairs, max_chunks_per_doc=MAX_CHUNKS_PER_DOC
    )
    with ctx.index_time():
        pairs_vectors = ctx.encode_fn(pairs.texts, "retrieval.passage")
    pair_maxsim = maxsim(Q, pairs_vectors, pairs.owner, n_d, mask=mask)
    bm25 = BM25.fit(ctx.doc_texts).scores(ctx.query_texts)
    channels = [
        zscore_rows(S, mask),
        zscore_rows(zscore_cols(pair_maxsim, mask), mask),
        zscore_cols(bm25, mask),
    ]
    fused = np.float32(1.0 - FUSION_SHARE) * channels[0]
    for channel in channels[1:]:
        fused = fused + np.float32(FUSION_SHARE / (len(channels) - 1)) * channel
    if mask is not None:
        fused = np.where(mask, fused, 0.0)
    return fused.astype(np.float32)
