"""Structural program: dense + pair_maxsim + prf_soft by a convex combination (weight 0.2 shared by the channels after the first), 0 feedback rounds.

Novelty: Relative to g0028, adds MaxSim over sentence pairs (raw scores); moves the share of the channels after the first from 0.6 to 0.2 [genome dense:row+pair_maxsim:none+prf_soft:row|convex:0.2|0].
Hypothesis: Adding MaxSim over sentence pairs (raw scores) improves nDCG@10 on tasks such as aila_statutes, legal_summarization, and lemb_needle, as it ensures that the best-matching part of a long document carries the evidence that one pooled vector dilutes.
Parent: g0028
Genome: {"channels": {"dense": "row", "pair_maxsim": "none", "prf_soft": "row"}, "fusion": "convex", "rounds": 0, "refine": "rocchio", "share": 0.2}
"""

import numpy as np

from embedding_ttc.programs.primitives.chunking import (
    MAX_CHUNKS_PER_DOC,
    chunk_documents,
    sentence_pairs,
    split_sentences,
)
from embedding_ttc.programs.primitives.feedback import soft_centroid_query
from embedding_ttc.programs.primitives.late import maxsim
from embedding_ttc.programs.primitives.scores import candidate_mask, zscore_rows

FUSION_SHARE = 0.2


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
    prf_soft = soft_centroid_query(Q, D, S, mask=mask) @ D.T
    channels = [
        zscore_rows(S, mask),
        pair_maxsim,
        zscore_rows(prf_soft, mask),
    ]
    fused = np.float32(1.0 - FUSION_SHARE) * channels[0]
    for channel in channels[1:]:
        fused = fused + np.float32(FUSION_SHARE / (len(channels) - 1)) * channel
    if mask is not None:
        fused = np.where(mask, fused, 0.0)
    return fused.astype(np.float32)
