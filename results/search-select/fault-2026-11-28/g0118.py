"""Structural program: dense + pair_topmean + bm25 + bigram + anti_hub by a convex combination (weight 0.9 shared by the channels after the first), 0 feedback rounds.

Novelty: Relative to g0078, changes MaxSim over paragraphs to TopMeanSim over sentence pairs; adds the distance from the candidates' centroid (a hubness correction) (column-then-row z-scores) [genome dense:row+pair_topmean:col+bm25:row+bigram:none+anti_hub:both|convex:0.9|0].
Hypothesis: Fusing the dense cosine S, TopMeanSim over sentence pairs, BM25, word-bigram overlap and the distance from the candidates' centroid (a hubness correction) by a convex combination (weight 0.9 shared by the channels after the first) should raise nDCG@10 on every task, because the best-matching part of a long document carries the evidence that one pooled vector dilutes; BM25 rewards exact rare terms (names, numbers) that embeddings blur; phrases matched in order are stronger evidence than single words; hub documents sit near every candidate set's centre and crowd every ranking.
Parent: g0078
Genome: {"channels": {"dense": "row", "pair_topmean": "col", "bm25": "row", "bigram": "none", "anti_hub": "both"}, "fusion": "convex", "rounds": 0, "refine": "rocchio", "share": 0.9}
"""

import numpy as np

from embedding_ttc.programs.primitives.chunking import (
    MAX_CHUNKS_PER_DOC,
    chunk_documents,
    sentence_pairs,
    split_sentences,
)
from embedding_ttc.programs.primitives.late import topmeansim
from embedding_ttc.programs.primitives.lexical import BM25, bigram_overlap
from embedding_ttc.programs.primitives.scores import candidate_mask, zscore_cols, zscore_rows

NORM_FLOOR = 1e-12
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
    pair_topmean = topmeansim(Q, pairs_vectors, pairs.owner, n_d, mask=mask)
    bm25 = BM25.fit(ctx.doc_texts).scores(ctx.query_texts)
    bigram = bigram_overlap(ctx.query_texts, ctx.doc_texts)
    members = np.ones((1, n_d), dtype=np.float32)
    if mask is not None:
        members = mask.astype(np.float32)
    pool_centroids = members @ D
    pool_centroids /= np.maximum(
        np.linalg.norm(pool_centroids, axis=1, keepdims=True), NORM_FLOOR
    )
    anti_hub = np.broadcast_to(-(pool_centroids @ D.T), (n_q, n_d)).copy()
    channels = [
        zscore_rows(S, mask),
        zscore_cols(pair_topmean, mask),
        zscore_rows(bm25, mask),
        bigram,
        zscore_rows(zscore_cols(anti_hub, mask), mask),
    ]
    fused = np.float32(1.0 - FUSION_SHARE) * channels[0]
    for channel in channels[1:]:
        fused = fused + np.float32(FUSION_SHARE / (len(channels) - 1)) * channel
    if mask is not None:
        fused = np.where(mask, fused, 0.0)
    return fused.astype(np.float32)
