"""Structural program: dense + para_maxsim + bm25 + anti_hub by a convex combination (weight 0.6 shared by the channels after the first), 0 feedback rounds.

Novelty: Relative to g0018, adds the distance from the candidates' centroid (a hubness correction) (per-query min-max); adds MaxSim over paragraphs (column-then-row z-scores) [genome dense:row+para_maxsim:both+bm25:row+anti_hub:minmax|convex:0.6|0].
Hypothesis: Fusing the dense cosine S, MaxSim over paragraphs, BM25 and the distance from the candidates' centroid (a hubness correction) by a convex combination (weight 0.6 shared by the channels after the first) should raise nDCG@10 on every task, because the best-matching part of a long document carries the evidence that one pooled vector dilutes; BM25 rewards exact rare terms (names, numbers) that embeddings blur; hub documents sit near every candidate set's centre and crowd every ranking.
Parent: g0018
Genome: {"channels": {"dense": "row", "para_maxsim": "both", "bm25": "row", "anti_hub": "minmax"}, "fusion": "convex", "rounds": 0, "refine": "rocchio", "share": 0.6}
"""

import numpy as np

from embedding_ttc.programs.primitives.chunking import (
    MAX_CHUNKS_PER_DOC,
    chunk_documents,
    split_paragraphs,
)
from embedding_ttc.programs.primitives.late import maxsim
from embedding_ttc.programs.primitives.lexical import BM25
from embedding_ttc.programs.primitives.scores import (
    candidate_mask,
    minmax_rows,
    zscore_cols,
    zscore_rows,
)

NORM_FLOOR = 1e-12
FUSION_SHARE = 0.6


def program(Q, D, S, ctx):
    n_q, n_d = S.shape
    mask = candidate_mask(n_q, n_d, ctx.candidates)
    paragraphs = chunk_documents(
        ctx.doc_texts, split_paragraphs, max_chunks_per_doc=MAX_CHUNKS_PER_DOC
    )
    with ctx.index_time():
        paragraphs_vectors = ctx.encode_fn(paragraphs.texts, "retrieval.passage")
    para_maxsim = maxsim(Q, paragraphs_vectors, paragraphs.owner, n_d, mask=mask)
    bm25 = BM25.fit(ctx.doc_texts).scores(ctx.query_texts)
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
        zscore_rows(zscore_cols(para_maxsim, mask), mask),
        zscore_rows(bm25, mask),
        minmax_rows(anti_hub, mask),
    ]
    fused = np.float32(1.0 - FUSION_SHARE) * channels[0]
    for channel in channels[1:]:
        fused = fused + np.float32(FUSION_SHARE / (len(channels) - 1)) * channel
    if mask is not None:
        fused = np.where(mask, fused, 0.0)
    return fused.astype(np.float32)
