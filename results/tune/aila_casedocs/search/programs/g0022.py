"""Structural program: dense + pair_maxsim + rare_idf + anti_hub by a convex combination (weight 0.4 shared by the channels after the first), 0 feedback rounds.

Novelty: Relative to g0021, replaces query-term coverage with the distance from the candidates' centroid (a hubness correction) [genome dense:col+pair_maxsim:both+rare_idf:row+anti_hub:col|convex:0.4|0].
Hypothesis: Fusing the dense cosine S, MaxSim over sentence pairs, rare-term IDF and the distance from the candidates' centroid (a hubness correction) by a convex combination (weight 0.4 shared by the channels after the first) should raise nDCG@10 on every task, because the best-matching part of a long document carries the evidence that one pooled vector dilutes; the rarest query terms identify the few documents that can answer; hub documents sit near every candidate set's centre and crowd every ranking.
Parent: g0021
Genome: {"channels": {"dense": "col", "pair_maxsim": "both", "rare_idf": "row", "anti_hub": "col"}, "fusion": "convex", "rounds": 0, "refine": "rocchio", "share": 0.4}
"""

import numpy as np

from embedding_ttc.programs.primitives.chunking import (
    MAX_CHUNKS_PER_DOC,
    chunk_documents,
    sentence_pairs,
    split_sentences,
)
from embedding_ttc.programs.primitives.late import maxsim
from embedding_ttc.programs.primitives.lexical import rare_term_idf
from embedding_ttc.programs.primitives.scores import candidate_mask, zscore_cols, zscore_rows

NORM_FLOOR = 1e-12
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
    rare_idf = rare_term_idf(ctx.query_texts, ctx.doc_texts)
    members = np.ones((1, n_d), dtype=np.float32)
    if mask is not None:
        members = mask.astype(np.float32)
    pool_centroids = members @ D
    pool_centroids /= np.maximum(
        np.linalg.norm(pool_centroids, axis=1, keepdims=True), NORM_FLOOR
    )
    anti_hub = np.broadcast_to(-(pool_centroids @ D.T), (n_q, n_d)).copy()
    channels = [
        zscore_cols(S, mask),
        zscore_rows(zscore_cols(pair_maxsim, mask), mask),
        zscore_rows(rare_idf, mask),
        zscore_cols(anti_hub, mask),
    ]
    fused = np.float32(1.0 - FUSION_SHARE) * channels[0]
    for channel in channels[1:]:
        fused = fused + np.float32(FUSION_SHARE / (len(channels) - 1)) * channel
    if mask is not None:
        fused = np.where(mask, fused, 0.0)
    return fused.astype(np.float32)
