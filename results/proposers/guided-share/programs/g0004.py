"""Structural program: dense + para_topmean + bm25 + rare_idf by reciprocal rank fusion, 0 feedback rounds.

Novelty: Relative to g0003, adds rare-term IDF (column z-scores) [genome dense:row+para_topmean:col+bm25:row+rare_idf:col|rrf|0].
Hypothesis: Adding rare-term IDF (column z-scores) helps in raising nDCG@10 for tasks such as aila_statutes, legal_summarization, and lemb_needle, as it ensures that the best-matching part of a long document carries the evidence that one pooled vector dilutes.
Parent: g0003
Genome: {"channels": {"dense": "row", "para_topmean": "col", "bm25": "row", "rare_idf": "col"}, "fusion": "rrf", "rounds": 0, "refine": "rocchio"}
"""

import numpy as np

from embedding_ttc.programs.primitives.chunking import (
    MAX_CHUNKS_PER_DOC,
    chunk_documents,
    split_paragraphs,
)
from embedding_ttc.programs.primitives.late import topmeansim
from embedding_ttc.programs.primitives.lexical import BM25, rare_term_idf
from embedding_ttc.programs.primitives.scores import (
    RRF_K,
    candidate_mask,
    rrf,
    zscore_cols,
    zscore_rows,
)


def program(Q, D, S, ctx):
    n_q, n_d = S.shape
    mask = candidate_mask(n_q, n_d, ctx.candidates)
    paragraphs = chunk_documents(
        ctx.doc_texts, split_paragraphs, max_chunks_per_doc=MAX_CHUNKS_PER_DOC
    )
    with ctx.index_time():
        paragraphs_vectors = ctx.encode_fn(paragraphs.texts, "retrieval.passage")
    para_topmean = topmeansim(Q, paragraphs_vectors, paragraphs.owner, n_d, mask=mask)
    bm25 = BM25.fit(ctx.doc_texts).scores(ctx.query_texts)
    rare_idf = rare_term_idf(ctx.query_texts, ctx.doc_texts)
    channels = [
        zscore_rows(S, mask),
        zscore_cols(para_topmean, mask),
        zscore_rows(bm25, mask),
        zscore_cols(rare_idf, mask),
    ]
    fused = rrf(channels, mask=mask, k=RRF_K)
    if mask is not None:
        fused = np.where(mask, fused, 0.0)
    return fused.astype(np.float32)
