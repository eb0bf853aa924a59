"""Structural program: half_dim + para_maxsim + bm25 by reciprocal rank fusion, 0 feedback rounds.

Novelty: Relative to g0015, replaces rare-term IDF with MaxSim over paragraphs; replaces query-term coverage with the Matryoshka half-dimension cosine [genome half_dim:none+para_maxsim:none+bm25:row|rrf|0].
Hypothesis: Fusing the Matryoshka half-dimension cosine, MaxSim over paragraphs and BM25 by reciprocal rank fusion should raise nDCG@10 on every task, because the coarse prefix of the embedding ranks by topic and resists fine-grained noise; the best-matching part of a long document carries the evidence that one pooled vector dilutes; BM25 rewards exact rare terms (names, numbers) that embeddings blur.
Parent: g0015
Genome: {"channels": {"half_dim": "none", "para_maxsim": "none", "bm25": "row"}, "fusion": "rrf", "rounds": 0, "refine": "rocchio"}
"""

import numpy as np

from embedding_ttc.programs.primitives.chunking import (
    MAX_CHUNKS_PER_DOC,
    chunk_documents,
    split_paragraphs,
)
from embedding_ttc.programs.primitives.late import maxsim
from embedding_ttc.programs.primitives.lexical import BM25
from embedding_ttc.programs.primitives.scores import RRF_K, candidate_mask, rrf, zscore_rows

NORM_FLOOR = 1e-12


def program(Q, D, S, ctx):
    n_q, n_d = S.shape
    mask = candidate_mask(n_q, n_d, ctx.candidates)
    half = max(1, Q.shape[1] // 2)
    q_half = Q[:, :half] / np.maximum(
        np.linalg.norm(Q[:, :half], axis=1, keepdims=True), NORM_FLOOR
    )
    d_half = D[:, :half] / np.maximum(
        np.linalg.norm(D[:, :half], axis=1, keepdims=True), NORM_FLOOR
    )
    half_dim = q_half @ d_half.T
    paragraphs = chunk_documents(
        ctx.doc_texts, split_paragraphs, max_chunks_per_doc=MAX_CHUNKS_PER_DOC
    )
    with ctx.index_time():
        paragraphs_vectors = ctx.encode_fn(paragraphs.texts, "retrieval.passage")
    para_maxsim = maxsim(Q, paragraphs_vectors, paragraphs.owner, n_d, mask=mask)
    bm25 = BM25.fit(ctx.doc_texts).scores(ctx.query_texts)
    channels = [
        half_dim,
        para_maxsim,
        zscore_rows(bm25, mask),
    ]
    fused = rrf(channels, mask=mask, k=RRF_K)
    if mask is not None:
        fused = np.where(mask, fused, 0.0)
    return fused.astype(np.float32)
