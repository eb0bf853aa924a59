"""Structural program: dense + sent_topmean by a sum of row z-scores, 1 feedback round.

Novelty: Relative to g0009, drops feedback round 2; replaces BM25 with TopMeanSim over sentences [genome dense:row+sent_topmean:row|zsum|1|softcentroid].
Hypothesis: Fusing the dense cosine S and TopMeanSim over sentences by a sum of row z-scores should raise nDCG@10 on every task, because the best-matching part of a long document carries the evidence that one pooled vector dilutes; 1 softcentroid feedback round then pull each query toward its fused top-K.
Parent: g0009
Genome: {"channels": {"dense": "row", "sent_topmean": "row"}, "fusion": "zsum", "rounds": 1, "refine": "softcentroid"}
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

FEEDBACK_K = 5
SOFT_TAU = 1.0
SOFT_ALPHA = 0.5


def program(Q, D, S, ctx):
    n_q, n_d = S.shape
    mask = candidate_mask(n_q, n_d, ctx.candidates)
    sentences = chunk_documents(
        ctx.doc_texts, split_sentences, max_chunks_per_doc=MAX_CHUNKS_PER_DOC
    )
    with ctx.index_time():
        sentences_vectors = ctx.encode_fn(sentences.texts, "retrieval.passage")
    sent_topmean = topmeansim(Q, sentences_vectors, sentences.owner, n_d, mask=mask)
    channels = [
        zscore_rows(S, mask),
        zscore_rows(sent_topmean, mask),
    ]
    fused = np.zeros((n_q, n_d), dtype=np.float32)
    for channel in channels:
        fused += zscore_rows(channel, mask)
    query = Q
    # feedback round 1: refine the query from the fused top-K, rescore D
    query = soft_centroid_query(
        query, D, zscore_rows(fused, mask), k=FEEDBACK_K, tau=SOFT_TAU, alpha=SOFT_ALPHA, mask=mask
    )
    fused = zscore_rows(fused, mask) + zscore_rows(query @ D.T, mask)
    if mask is not None:
        fused = np.where(mask, fused, 0.0)
    return fused.astype(np.float32)
