"""Structural program: dense + para_topmean + bm25 + bigram by a sum of row z-scores, 0 feedback rounds.

Novelty: Relative to g0024, drops feedback round 1; adds TopMeanSim over paragraphs (column-then-row z-scores) [genome dense:row+para_topmean:both+bm25:row+bigram:minmax|zsum|0].
Hypothesis: Fusing the dense cosine S, TopMeanSim over paragraphs, BM25 and word-bigram overlap by a sum of row z-scores should raise nDCG@10 on every task, because the best-matching part of a long document carries the evidence that one pooled vector dilutes; BM25 rewards exact rare terms (names, numbers) that embeddings blur; phrases matched in order are stronger evidence than single words.
Parent: g0024
Genome: {"channels": {"dense": "row", "para_topmean": "both", "bm25": "row", "bigram": "minmax"}, "fusion": "zsum", "rounds": 0, "refine": "rocchio"}
"""

import numpy as np

from embedding_ttc.programs.primitives.chunking import (
    MAX_CHUNKS_PER_DOC,
    chunk_documents,
    split_paragraphs,
)
from embedding_ttc.programs.primitives.late import topmeansim
from embedding_ttc.programs.primitives.lexical import BM25, bigram_overlap
from embedding_ttc.programs.primitives.scores import (
    candidate_mask,
    minmax_rows,
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
    bigram = bigram_overlap(ctx.query_texts, ctx.doc_texts)
    channels = [
        zscore_rows(S, mask),
        zscore_rows(zscore_cols(para_topmean, mask), mask),
        zscore_rows(bm25, mask),
        minmax_rows(bigram, mask),
    ]
    fused = np.zeros((n_q, n_d), dtype=np.float32)
    for channel in channels:
        fused += zscore_rows(channel, mask)
    if mask is not None:
        fused = np.where(mask, fused, 0.0)
    return fused.astype(np.float32)
