"""Structural program: dense + sent_topmean + anti_hub by a convex combination (weight 0.9 shared by the channels after the first), 0 feedback rounds.

Novelty: Relative to g0046, drops feedback round 1; switches BM25 to column z-scores (was row z-scores); switches MaxSim over paragraphs to column-then-row z-scores (was column z-scores); changes MaxSim over paragraphs to TopMeanSim over sentences; drops BM25; switches the distance from the candidates' centroid (a hubness correction) to column-then-row z-scores (was per-query min-max) [genome dense:row+sent_topmean:both+anti_hub:both|convex:0.9|0].
Hypothesis: Fusing the dense cosine S, TopMeanSim over sentences and the distance from the candidates' centroid (a hubness correction) by a convex combination (weight 0.9 shared by the channels after the first) should raise nDCG@10 on every task, because the best-matching part of a long document carries the evidence that one pooled vector dilutes; hub documents sit near every candidate set's centre and crowd every ranking.
Parent: g0046
Genome: {"channels": {"dense": "row", "sent_topmean": "both", "anti_hub": "both"}, "fusion": "convex", "rounds": 0, "refine": "rocchio", "share": 0.9}
"""

import numpy as np

from embedding_ttc.programs.primitives.chunking import (
    MAX_CHUNKS_PER_DOC,
    chunk_documents,
    split_sentences,
)
from embedding_ttc.programs.primitives.late import topmeansim
from embedding_ttc.programs.primitives.scores import candidate_mask, zscore_cols, zscore_rows

NORM_FLOOR = 1e-12
FUSION_SHARE = 0.9


def program(Q, D, S, ctx):
    n_q, n_d = S.shape
    mask = candidate_mask(n_q, n_d, ctx.candidates)
    sentences = chunk_documents(
        ctx.doc_texts, split_sentences, max_chunks_per_doc=MAX_CHUNKS_PER_DOC
    )
    with ctx.index_time():
        sentences_vectors = ctx.encode_fn(sentences.texts, "retrieval.passage")
    sent_topmean = topmeansim(Q, sentences_vectors, sentences.owner, n_d, mask=mask)
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
        zscore_rows(zscore_cols(sent_topmean, mask), mask),
        zscore_rows(zscore_cols(anti_hub, mask), mask),
    ]
    fused = np.float32(1.0 - FUSION_SHARE) * channels[0]
    for channel in channels[1:]:
        fused = fused + np.float32(FUSION_SHARE / (len(channels) - 1)) * channel
    if mask is not None:
        fused = np.where(mask, fused, 0.0)
    return fused.astype(np.float32)
