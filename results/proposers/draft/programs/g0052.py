"""Novelty: Adds lexical evidence to the retrieval process by using both BM25 and query term coverage.
Hypothesis: Combines the BM25 scores with the query term coverage (QT) scores of the queries, and then fuses these with the original scores S to obtain a refined ranking."""
import numpy as np

from embedding_ttc.programs.primitives.channels import fuse, bm25_scores
from embedding_ttc.programs.primitives.lexical import query_term_coverage
from embedding_ttc.programs.primitives.scores import candidate_mask, zscore_rows, top_k_indices
from embedding_ttc.programs.primitives.feedback import soft_centroid_query
from embedding_ttc.programs.primitives.lexical import BM25

W_S = 1.0
W_BM25 = 0.5

def program(Q, D, S, ctx):
    mask = candidate_mask(S.shape[0], S.shape[1], ctx.candidates)
    B = bm25_scores(ctx)  # BM25 scores of every document for every query (no encoder call).
    QT = query_term_coverage(ctx.query_texts, ctx.doc_texts)  # Query term coverage scores of the queries.

    # Fuse the BM25 scores with the query term coverage scores by z-scores
    scores = zscore_rows(S, mask)
    scores += zscore_rows(QT, mask)

    # Fuse the original scores with the z-scores
    fused = fuse([S, B, QT], [W_S, W_BM25], mask=mask, method="zscore")

    return fused.astype(np.float32)
