"""Structural program: dense + pair_maxsim by a convex combination (weight 0.9 shared by the channels after the first), 0 feedback rounds.

Novelty: Relative to g0018, replaces BM25 with MaxSim over sentence pairs [genome dense:row+pair_maxsim:row|convex:0.9|0].
Hypothesis: Fusing the dense cosine S and MaxSim over sentence pairs by a convex combination (weight 0.9 shared by the channels after the first) should raise nDCG@10 on every task, because the best-matching part of a long document carries the evidence that one pooled vector dilutes.
Parent: g0018
Genome: {"channels": {"dense": "row", "pair_maxsim": "row"}, "fusion": "convex", "rounds": 0, "refine": "rocchio", "share": 0.9}
"""

import numpy as np

from embedding_ttc.programs.primitives.chunking import (
    MAX_CHUNKS_PER_DOC,
    chunk_documents,
    sentence_pairs,
    split_sentences,
)
from embedding_ttc.programs.primitives.late import maxsim
from embedding_ttc.programs.primitives.scores import candidate_mask, zscore_rows

FUSION_SHARE = 0.9


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
    channels = [
        zscore_rows(S, mask),
        zscore_rows(pair_maxsim, mask),
    ]
    fused = np.float32(1.0 - FUSION_SHARE) * channels[0]
    for channel in channels[1:]:
        fused = fused + np.float32(FUSION_SHARE / (len(channels) - 1)) * channel
    if mask is not None:
        fused = np.where(mask, fused, 0.0)
    return fused.astype(np.float32)
