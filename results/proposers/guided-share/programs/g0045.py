"""Structural program: dense + sent_maxsim + para_maxsim + bm25 + bigram by a sum of row z-scores, 0 feedback rounds.

Novelty: Relative to g0018, adds MaxSim over paragraphs (per-query min-max) [genome dense:row+sent_maxsim:both+para_maxsim:minmax+bm25:row+bigram:both|zsum|0].
Hypothesis: Adding MaxSim over paragraphs (per-query min-max) helps nDCG@10 because it ensures that the best-matching part of a long document carries the evidence that one pooled vector dilutes.
Parent: g0018
Genome: {"channels": {"dense": "row", "sent_maxsim": "both", "para_maxsim": "minmax", "bm25": "row", "bigram": "both"}, "fusion": "zsum", "rounds": 0, "refine": "rocchio"}
"""

import numpy as np

from embedding_ttc.programs.primitives.chunking import (
    MAX_CHUNKS_PER_DOC,
    chunk_documents,
    split_paragraphs,
    split_sentences,
)
from embedding_ttc.programs.primitives.late import maxsim
from embedding_ttc.programs.primitives.lexical import BM25, bigram_overlap
from embedding_ttc.programs.primitives.scores import (
    ZSCORE_EPS,
    candidate_mask,
    zscore_cols,
    zscore_rows,
)


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
    paragraphs = chunk_documents(
        ctx.doc_texts, split_paragraphs, max_chunks_per_doc=MAX_CHUNKS_PER_DOC
    )
    with ctx.index_time():
        paragraphs_vectors = ctx.encode_fn(paragraphs.texts, "retrieval.passage")
    para_maxsim = maxsim(Q, paragraphs_vectors, paragraphs.owner, n_d, mask=mask)
    bm25 = BM25.fit(ctx.doc_texts).scores(ctx.query_texts)
    bigram = bigram_overlap(ctx.query_texts, ctx.doc_texts)
    channels = [
        zscore_rows(S, mask),
        zscore_rows(zscore_cols(sent_maxsim, mask), mask),
        _minmax_rows(para_maxsim, mask),
        zscore_rows(bm25, mask),
        zscore_rows(zscore_cols(bigram, mask), mask),
    ]
    fused = np.zeros((n_q, n_d), dtype=np.float32)
    for channel in channels:
        fused += zscore_rows(channel, mask)
    if mask is not None:
        fused = np.where(mask, fused, 0.0)
    return fused.astype(np.float32)
