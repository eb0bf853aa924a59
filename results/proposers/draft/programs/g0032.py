# Novelty: matryoshka cascading (dimension truncation) with document substructure decomposition.
# Hypothesis: each row is truncated to a smaller dimension, then its pieces are scored and fused with the original scores.
from embedding_ttc.programs.primitives.channels import fuse, prefix_scores, chunk_scores, view_scores
from embedding_ttc.programs.primitives.scores import candidate_mask
from embedding_ttc.programs.primitives.feedback import soft_centroid_query
from embedding_ttc.programs.primitives.lexical import BM25, query_term_coverage
from embedding_ttc.programs.primitives.chunking import Chunks, chunk_documents, split_sentences
from embedding_ttc.programs.primitives.lexical import BM25

W_S = 1.0
W_P1 = 0.5
W_P2 = 0.5

def program(Q, D, S, ctx):
    mask = candidate_mask(S.shape[0], S.shape[1], ctx.candidates)
    P1 = prefix_scores(Q, D, Q.shape[1] // 4)
    P2 = prefix_scores(Q, D, Q.shape[1] // 2)
    A = chunk_scores(Q, ctx, "paragraph", "max", mask)
    B = chunk_scores(Q, ctx, "sentence_pair", "topmean", mask)
    return fuse([S, P2, P1, A, B], [W_S, W_P2, W_P1, 0.0, 0.0], mask=mask)
