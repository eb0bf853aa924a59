"""Structural program: dense + sent_maxsim + bm25 + bigram + prf_rocchio by a sum of row z-scores, 0 feedback rounds.

Novelty: Relative to g0018, adds a Rocchio-refined query (column-then-row z-scores) [genome dense:row+sent_maxsim:both+bm25:row+bigram:both+prf_rocchio:both|zsum|0].
Hypothesis: Adding a Rocchio-refined query (column-then-row z-scores) improves nDCG@10 on every task because it ensures that the best-matching part of a long document carries the evidence that one pooled vector dilutes. This new channel helps to align the relevance of the query with the dense top-K, enhancing n
Parent: g0018
Genome: {"channels": {"dense": "row", "sent_maxsim": "both", "bm25": "row", "bigram": "both", "prf_rocchio": "both"}, "fusion": "zsum", "rounds": 0, "refine": "rocchio"}
"""

import numpy as np

from embedding_ttc.programs.primitives.chunking import (
    MAX_CHUNKS_PER_DOC,
    chunk_documents,
    split_sentences,
)
from embedding_ttc.programs.primitives.feedback import centroid, rocchio
from embedding_ttc.programs.primitives.late import maxsim
from embedding_ttc.programs.primitives.lexical import BM25, bigram_overlap
from embedding_ttc.programs.primitives.scores import (
    bottom_k_indices,
    candidate_mask,
    top_k_indices,
    zscore_cols,
    zscore_rows,
)

FEEDBACK_K = 5
ROCCHIO_BETA = 0.6
ROCCHIO_GAMMA = 0.2


def _rocchio_query(query, D, scores, mask):
    """Rocchio (1971): toward the top-K centroid, away from the bottom-K centroid."""
    top = top_k_indices(scores, FEEDBACK_K, mask)
    bottom = bottom_k_indices(scores, FEEDBACK_K, mask)
    positive = np.array([centroid(D, rows) for rows in top], dtype=np.float32)
    negative = np.array([centroid(D, rows) for rows in bottom], dtype=np.float32)
    return rocchio(
        query,
        positive.reshape(query.shape),
        negative.reshape(query.shape),
        alpha=1.0,
        beta=ROCCHIO_BETA,
        gamma=ROCCHIO_GAMMA,
    )


def program(Q, D, S, ctx):
    n_q, n_d = S.shape
    mask = candidate_mask(n_q, n_d, ctx.candidates)
    sentences = chunk_documents(
        ctx.doc_texts, split_sentences, max_chunks_per_doc=MAX_CHUNKS_PER_DOC
    )
    with ctx.index_time():
        sentences_vectors = ctx.encode_fn(sentences.texts, "retrieval.passage")
    sent_maxsim = maxsim(Q, sentences_vectors, sentences.owner, n_d, mask=mask)
    bm25 = BM25.fit(ctx.doc_texts).scores(ctx.query_texts)
    bigram = bigram_overlap(ctx.query_texts, ctx.doc_texts)
    prf_rocchio = _rocchio_query(Q, D, S, mask) @ D.T
    channels = [
        zscore_rows(S, mask),
        zscore_rows(zscore_cols(sent_maxsim, mask), mask),
        zscore_rows(bm25, mask),
        zscore_rows(zscore_cols(bigram, mask), mask),
        zscore_rows(zscore_cols(prf_rocchio, mask), mask),
    ]
    fused = np.zeros((n_q, n_d), dtype=np.float32)
    for channel in channels:
        fused += zscore_rows(channel, mask)
    if mask is not None:
        fused = np.where(mask, fused, 0.0)
    return fused.astype(np.float32)
