"""Structural program: dense + para_maxsim + bigram by a sum of row z-scores, 0 feedback rounds.

Novelty: Relative to g0078, drops BM25; switches the dense cosine S to column z-scores (was row z-scores); fuses by a sum of row z-scores instead of a convex combination (weight 0.9 shared by the channels after the first) [genome dense:col+para_maxsim:col+bigram:none|zsum|0].
Hypothesis: Fusing the dense cosine S, MaxSim over paragraphs and word-bigram overlap by a sum of row z-scores should raise nDCG@10 on every task, because the best-matching part of a long document carries the evidence that one pooled vector dilutes; phrases matched in order are stronger evidence than single words.
Parent: g0078
Genome: {"channels": {"dense": "col", "para_maxsim": "col", "bigram": "none"}, "fusion": "zsum", "rounds": 0, "refine": "rocchio"}
"""

import numpy as np

from embedding_ttc.programs.primitives.chunking import (
    MAX_CHUNKS_PER_DOC,
    chunk_documents,
    split_paragraphs,
)
from embedding_ttc.programs.primitives.late import maxsim
from embedding_ttc.programs.primitives.lexical import bigram_overlap
from embedding_ttc.programs.primitives.scores import candidate_mask, zscore_cols, zscore_rows


def program(Q, D, S, ctx):
    n_q, n_d = S.shape
    mask = candidate_mask(n_q, n_d, ctx.candidates)
    paragraphs = chunk_documents(
        ctx.doc_texts, split_paragraphs, max_chunks_per_doc=MAX_CHUNKS_PER_DOC
    )
    with ctx.index_time():
        paragraphs_vectors = ctx.encode_fn(paragraphs.texts, "retrieval.passage")
    para_maxsim = maxsim(Q, paragraphs_vectors, paragraphs.owner, n_d, mask=mask)
    bigram = bigram_overlap(ctx.query_texts, ctx.doc_texts)
    channels = [
        zscore_cols(S, mask),
        zscore_cols(para_maxsim, mask),
        bigram,
    ]
    fused = np.zeros((n_q, n_d), dtype=np.float32)
    for channel in channels:
        fused += zscore_rows(channel, mask)
    if mask is not None:
        fused = np.where(mask, fused, 0.0)
    return fused.astype(np.float32)
