from embedding_ttc.programs.primitives.channels import prefix_scores
from embedding_ttc.programs.primitives.channels import fuse, chunk_scores
from embedding_ttc.programs.primitives.scores import candidate_mask, top_k_indices
from embedding_ttc.programs.primitives.lexical import BM25
from embedding_ttc.programs.primitives.chunking import Chunks, chunk_documents, split_sentences
from embedding_ttc.programs.primitives.feedback import soft_centroid_query
from embedding_ttc.programs.primitives.late import maxsim
from embedding_ttc.programs.primitives.chunking import Chunks, chunk_documents, split_sentences
from embedding_ttc.programs.primitives.lexical import BM25, query_term_coverage
from embedding_ttc.programs.primitives.scores import candidate_mask
from embedding_ttc.programs.primitives.feedback import soft_centroid_query
from embedding_ttc.programs.primitives.lexical import BM25, query_term_coverage
W_S = 1.0
W_BM25 = 0.5
W_QTC = 0.5

def program(Q, D, S, ctx):
    mask = candidate_mask(S.shape[0], S.shape[1], ctx.candidates)
    M = chunk_scores(Q, ctx, "sentence", "max", mask)
    P1 = prefix_scores(Q, D, Q.shape[1] // 4)
    P2 = prefix_scores(Q, D, Q.shape[1] // 2)
    return fuse([S, M, P2, P1], [W_S, W_BM25, W_QTC, W_QTC], mask=mask)
