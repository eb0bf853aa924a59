"""Structural program: dense + sent_topmean + prf_soft by a convex combination (weight 0.5 shared by the channels after the first), 0 feedback rounds.

Novelty: Relative to g0028, adds TopMeanSim over sentences (row z-scores) [genome dense:row+sent_topmean:row+prf_soft:row|convex:0.5|0].
Hypothesis: The addition of TopMeanSim over sentences (row z-scores) to the g0028 retrieval program will raise nDCG@10 by bringing the best-matching part of a long document closer to the evidence that one pooled vector dilutes. This is because TopMeanSim helps in capturing the essence of the query in a more co-
Parent: g0028
Genome: {"channels": {"dense": "row", "sent_topmean": "row", "prf_soft": "row"}, "fusion": "convex", "rounds": 0, "refine": "rocchio", "share": 0.5}
"""

import numpy as np

from embedding_ttc.programs.primitives.chunking import (
    MAX_CHUNKS_PER_DOC,
    chunk_documents,
    split_sentences,
)
from embedding_ttc.programs.primitives.feedback import soft_centroid_query
from embedding_ttc.programs.primitives.late import topmeansim
from embedding_ttc.programs.primitives.scores import candidate_mask, zscore_rows

FUSION_SHARE = 0.5


def program(Q, D, S, ctx):
    n_q, n_d = S.shape
    mask = candidate_mask(n_q, n_d, ctx.candidates)
    sentences = chunk_documents(
        ctx.doc_texts, split_sentences, max_chunks_per_doc=MAX_CHUNKS_PER_DOC
    )
    with ctx.index_time():
        sentences_vectors = ctx.encode_fn(sentences.texts, "retrieval.passage")
    sent_topmean = topmeansim(Q, sentences_vectors, sentences.owner, n_d, mask=mask)
    prf_soft = soft_centroid_query(Q, D, S, mask=mask) @ D.T
    channels = [
        zscore_rows(S, mask),
        zscore_rows(sent_topmean, mask),
        zscore_rows(prf_soft, mask),
    ]
    fused = np.float32(1.0 - FUSION_SHARE) * channels[0]
    for channel in channels[1:]:
        fused = fused + np.float32(FUSION_SHARE / (len(channels) - 1)) * channel
    if mask is not None:
        fused = np.where(mask, fused, 0.0)
    return fused.astype(np.float32)
