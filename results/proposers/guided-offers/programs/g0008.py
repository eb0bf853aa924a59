"""Structural program: dense + pair_maxsim + bm25 + coverage by reciprocal rank fusion, 0 feedback rounds.

Novelty: Relative to g0004, adds MaxSim over sentence pairs (raw scores) [genome dense:row+pair_maxsim:none+bm25:row+coverage:row|rrf|0].
Hypothesis: Adding MaxSim over sentence pairs (raw scores) could potentially raise nDCG@10 for the aila_statutes task by aligning the dense features with the query normalization. This change aligns the dense features with the query normalization.
Parent: g0004
Genome: {"channels": {"dense": "row", "pair_maxsim": "none", "bm25": "row", "coverage": "row"}, "fusion": "rrf", "rounds": 0, "refine": "rocchio"}
"""

import numpy as np

from embedding_ttc.programs.primitives.chunking import (
    MAX_CHUNKS_PER_DOC,
    chunk_documents,
    sentence_pairs,
    split_sentences,
)
from embedding_ttc.programs.primitives.late import maxsim
from embedding_ttc.programs.primitives.lexical import BM25, query_term_coverage
from embedding_ttc.programs.primitives.scores import RRF_K, candidate_mask, rrf, zscore_rows


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
    coverage = query_term_coverage(ctx.query_texts, ctx.doc_texts)
    channels = [
        zscore_rows(S, mask),
        pair_maxsim,
        zscore_rows(bm25, mask),
        zscore_rows(coverage, mask),
    ]
    fused = rrf(channels, mask=mask, k=RRF_K)
    if mask is not None:
        fused = np.where(mask, fused, 0.0)
    return fused.astype(np.float32)
