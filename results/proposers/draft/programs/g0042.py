"""
Novelty: combines the best sentence with the top-mean paragraph scores.
Hypothesis: the best sentences share the vocabulary the query lacks, and the top-mean paragraphs are the most informative.
"""
from embedding_ttc.programs.primitives.channels import fuse, view_scores, bm25_scores, chunk_scores, prefix_scores
from embedding_ttc.programs.primitives.scores import candidate_mask, top_k_indices, zscore_rows, zscore_cols, rrf
from embedding_ttc.programs.primitives.feedback import soft_centroid_query
from embedding_ttc.programs.primitives.late import maxsim
from embedding_ttc.programs.primitives.chunking import Chunks, chunk_documents, split_sentences
from embedding_ttc.programs.primitives.lexical import BM25

W_S = 1.0
W_BM25 = 0.5


def program(Q, D, S, ctx):
    mask = candidate_mask(S.shape[0], S.shape[1], ctx.candidates)
    B = bm25_scores(ctx)
    P1 = prefix_scores(Q, D, Q.shape[1] // 4)  # Coarse prefix scores
    P2 = prefix_scores(Q, D, Q.shape[1] // 2)  # Coarser prefix scores
    M = chunk_scores(Q, ctx, "sentence", "max", mask)  # Best sentences
    M2 = chunk_scores(Q, ctx, "paragraph", "topmean", mask)  # Top-mean paragraphs
    fused = fuse([S, M, P2, P1], [W_S, W_BM25, 1.0, 1.0], mask=mask)
    return fused
