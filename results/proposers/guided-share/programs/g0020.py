"""Structural program: dense + pair_maxsim + bm25 by a sum of row z-scores, 0 feedback rounds.

Novelty: Relative to g0010, adds MaxSim over sentence pairs (raw scores) [genome dense:row+pair_maxsim:none+bm25:row|zsum|0].
Hypothesis: Adding MaxSim over sentence pairs (raw scores) improves nDCG@10 on every task, as it captures the best-matching part of a long document, which carries the evidence that one pooled vector dilutes. This is beneficial for tasks such as aila_statutes, legal_summarization, and lemb_needle, as it improves
Parent: g0010
Genome: {"channels": {"dense": "row", "pair_maxsim": "none", "bm25": "row"}, "fusion": "zsum", "rounds": 0, "refine": "rocchio"}
"""

import numpy as np

from embedding_ttc.programs.primitives.chunking import (
    MAX_CHUNKS_PER_DOC,
    chunk_documents,
    sentence_pairs,
    split_sentences,
)
from embedding_ttc.programs.primitives.late import maxsim
from embedding_ttc.programs.primitives.lexical import BM25
from embedding_ttc.programs.primitives.scores import candidate_mask, zscore_rows


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
    bm25 = BM25.fit(ctx.doc_texts).scores(ctx.query_texts)
    channels = [
        zscore_rows(S, mask),
        pair_maxsim,
        zscore_rows(bm25, mask),
    ]
    fused = np.zeros((n_q, n_d), dtype=np.float32)
    for channel in channels:
        fused += zscore_rows(channel, mask)
    if mask is not None:
        fused = np.where(mask, fused, 0.0)
    return fused.astype(np.float32)
