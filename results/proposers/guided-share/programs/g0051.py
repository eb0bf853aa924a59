"""Structural program: dense + sent_maxsim + bm25 + bigram + consensus by a sum of row z-scores, 0 feedback rounds.

Novelty: Relative to g0018, adds each document's consensus with the dense top-K (per-query min-max) [genome dense:row+sent_maxsim:both+bm25:row+bigram:both+consensus:minmax|zsum|0].
Hypothesis: Adding each document's consensus with the dense top-K (per-query min-max) helps nDCG@10 on every task because it ensures that the best-matching part of a long document carries the evidence that one pooled vector dilutes.
Parent: g0018
Genome: {"channels": {"dense": "row", "sent_maxsim": "both", "bm25": "row", "bigram": "both", "consensus": "minmax"}, "fusion": "zsum", "rounds": 0, "refine": "rocchio"}
"""

import numpy as np

from embedding_ttc.programs.primitives.chunking import (
    MAX_CHUNKS_PER_DOC,
    chunk_documents,
    split_sentences,
)
from embedding_ttc.programs.primitives.feedback import centroid
from embedding_ttc.programs.primitives.late import maxsim
from embedding_ttc.programs.primitives.lexical import BM25, bigram_overlap
from embedding_ttc.programs.primitives.scores import (
    ZSCORE_EPS,
    candidate_mask,
    top_k_indices,
    zscore_cols,
    zscore_rows,
)

CONSENSUS_K = 10


def _minmax_rows(scores, mask):
    """Min-max over each query's candidates: its best candidate 1, its worst 0.

    A query whose candidates span at most ZSCORE_EPS (one candidate, a constant row) is all 0,
    as the z-scores treat a row without spread; non-candidates are 0.
    """
    cand = np.ones(np.shape(scores), dtype=bool) if mask is None else mask
    x = np.where(cand, scores, 0.0).astype(np.float64)
    low = x.min(axis=1, keepdims=True, where=cand, initial=np.inf)
    high = x.max(axis=1, keepdims=True, where=cand, initial=-np.inf)
    span = high - low
    spread = span > ZSCORE_EPS
    scaled = np.where(spread, (x - low) / np.where(spread, span, 1.0), 0.0)
    return np.where(cand, scaled, 0.0).astype(np.float32)


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
    heads = top_k_indices(S, CONSENSUS_K, mask)
    head_centroids = np.array([centroid(D, rows) for rows in heads], dtype=np.float32)
    consensus = head_centroids.reshape(n_q, D.shape[1]) @ D.T
    channels = [
        zscore_rows(S, mask),
        zscore_rows(zscore_cols(sent_maxsim, mask), mask),
        zscore_rows(bm25, mask),
        zscore_rows(zscore_cols(bigram, mask), mask),
        _minmax_rows(consensus, mask),
    ]
    fused = np.zeros((n_q, n_d), dtype=np.float32)
    for channel in channels:
        fused += zscore_rows(channel, mask)
    if mask is not None:
        fused = np.where(mask, fused, 0.0)
    return fused.astype(np.float32)
