"""Novelty: Adds lexical evidence to the query and document vectors, and uses reciprocal rank fusion with pseudo-relevance feedback to improve the ranking.
Hypothesis: This program first builds a B-matrix (BM25 score of each document for each query) and a C-matrix (query-term coverage of each query in each document). It then fuses these matrices with the query vectors S by rank using the reciprocal rank fusion method (RRF). Finally, it moves the query vectors P towards the top-ranked documents using pseudo-relevance feedback and fuses these vectors with the query vectors S again using the reciprocal rank fusion method. The final score is the sum of these fused scores."""

from embedding_ttc.programs.primitives.channels import fuse, bm25_scores
from embedding_ttc.programs.primitives.lexical import query_term_coverage
from embedding_ttc.programs.primitives.scores import candidate_mask
from embedding_ttc.programs.primitives.channels import prf_scores
from embedding_ttc.programs.primitives.feedback import soft_centroid_query
from embedding_ttc.programs.primitives.lexical import BM25
from embedding_ttc.programs.primitives.scores import zscore_rows, zscore_cols, rrf
from embedding_ttc.programs.primitives.chunking import Chunks, chunk_documents, split_sentences
from embedding_ttc.programs.primitives.lexical import BM25
W_S = 1.0
W_BM25 = 0.5
W_P = 1.0
W_P2 = 1.0
K = 3
ALPHA = 0.7
K2 = 3
ALPHA2 = 0.7


def program(Q, D, S, ctx):
    mask = candidate_mask(S.shape[0], S.shape[1], ctx.candidates)
    B = bm25_scores(ctx)
    C = query_term_coverage(ctx.query_texts, ctx.doc_texts)
    P = prf_scores(Q, D, S, k=K, alpha=ALPHA, mask=mask)
    P2 = prf_scores(Q, D, P, k=K2, alpha=ALPHA2, mask=mask)
    fused1 = fuse([S, B, C], None, mask=mask, method="rrf")
    fused2 = fuse([S, P, P2], [W_P, W_P2], mask=mask)
    return fused1 + fused2
