"""Structural program: bm25 + coverage + rare_idf by a convex combination (weight 0.2 shared by the channels after the first), 0 feedback rounds.

Novelty: Relative to g0015, switches query-term coverage to column-then-row z-scores (was raw scores); fuses by a weighted sum instead of reciprocal rank fusion; fuses by a convex combination (weight 0.2 shared by the channels after the first) instead of a weighted sum [genome bm25:row+coverage:both+rare_idf:none|convex:0.2|0].
Hypothesis: Fusing BM25, query-term coverage and rare-term IDF by a convex combination (weight 0.2 shared by the channels after the first) should raise nDCG@10 on every task, because BM25 rewards exact rare terms (names, numbers) that embeddings blur; documents that cover every query term answer the whole query; the rarest query terms identify the few documents that can answer.
Parent: g0015
Genome: {"channels": {"bm25": "row", "coverage": "both", "rare_idf": "none"}, "fusion": "convex", "rounds": 0, "refine": "rocchio", "share": 0.2}
"""

import numpy as np

from embedding_ttc.programs.primitives.lexical import BM25, query_term_coverage, rare_term_idf
from embedding_ttc.programs.primitives.scores import candidate_mask, zscore_cols, zscore_rows

FUSION_SHARE = 0.2


def program(Q, D, S, ctx):
    n_q, n_d = S.shape
    mask = candidate_mask(n_q, n_d, ctx.candidates)
    bm25 = BM25.fit(ctx.doc_texts).scores(ctx.query_texts)
    coverage = query_term_coverage(ctx.query_texts, ctx.doc_texts)
    rare_idf = rare_term_idf(ctx.query_texts, ctx.doc_texts)
    channels = [
        zscore_rows(bm25, mask),
        zscore_rows(zscore_cols(coverage, mask), mask),
        rare_idf,
    ]
    fused = np.float32(1.0 - FUSION_SHARE) * channels[0]
    for channel in channels[1:]:
        fused = fused + np.float32(FUSION_SHARE / (len(channels) - 1)) * channel
    if mask is not None:
        fused = np.where(mask, fused, 0.0)
    return fused.astype(np.float32)
