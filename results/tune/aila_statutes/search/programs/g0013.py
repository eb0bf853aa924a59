"""Structural program: dense + pair_topmean + coverage by a weighted sum, 1 feedback round.

Novelty: Relative to g0012, replaces a SoftCentroid-refined query with query-term coverage; replaces BM25 with TopMeanSim over sentence pairs [genome dense:row+pair_topmean:row+coverage:both|wsum|1|softcentroid].
Hypothesis: Fusing the dense cosine S, TopMeanSim over sentence pairs and query-term coverage by a weighted sum should raise nDCG@10 on every task, because the best-matching part of a long document carries the evidence that one pooled vector dilutes; documents that cover every query term answer the whole query; 1 softcentroid feedback round then pull each query toward its fused top-K.
Parent: g0012
Genome: {"channels": {"dense": "row", "pair_topmean": "row", "coverage": "both"}, "fusion": "wsum", "rounds": 1, "refine": "softcentroid"}
"""

import numpy as np

from embedding_ttc.programs.primitives.chunking import (
    MAX_CHUNKS_PER_DOC,
    chunk_documents,
    sentence_pairs,
    split_sentences,
)
from embedding_ttc.programs.primitives.feedback import soft_centroid_query
from embedding_ttc.programs.primitives.late import topmeansim
from embedding_ttc.programs.primitives.lexical import query_term_coverage
from embedding_ttc.programs.primitives.scores import candidate_mask, zscore_cols, zscore_rows

FEEDBACK_K = 5
SOFT_TAU = 1.0
SOFT_ALPHA = 0.5
CHANNEL_WEIGHTS = (1.0, 0.5, 0.5)


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
    coverage = query_term_coverage(ctx.query_texts, ctx.doc_texts)
    channels = [
        zscore_rows(S, mask),
        zscore_rows(pair_topmean, mask),
        zscore_rows(zscore_cols(coverage, mask), mask),
    ]
    fused = np.zeros((n_q, n_d), dtype=np.float32)
    for weight, channel in zip(CHANNEL_WEIGHTS, channels, strict=True):
        fused += np.float32(weight) * channel
    query = Q
    # feedback round 1: refine the query from the fused top-K, rescore D
    query = soft_centroid_query(
        query, D, zscore_rows(fused, mask), k=FEEDBACK_K, tau=SOFT_TAU, alpha=SOFT_ALPHA, mask=mask
    )
    fused = zscore_rows(fused, mask) + zscore_rows(query @ D.T, mask)
    if mask is not None:
        fused = np.where(mask, fused, 0.0)
    return fused.astype(np.float32)
