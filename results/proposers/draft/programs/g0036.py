# Novelty: uses a second granularity (chunk_scores(Q, ctx, "paragraph", "topmean", mask)) to score each document by its best sentence, and then fuses these scores with S and P1, P2 as coarse channels.
# Hypothesis: the coarser the smaller the weight, and the more relevant the coarse channels are to the sentences, the better the fused scores will be.
import numpy as np
from embedding_ttc.programs.primitives.channels import fuse, bm25_scores, chunk_scores, prefix_scores, prf_scores, query_view_scores, view_scores
from embedding_ttc.programs.primitives.scores import candidate_mask, zscore_rows, zscore_cols, rrf, top_k_indices
from embedding_ttc.programs.primitives.feedback import soft_centroid_query
from embedding_ttc.programs.primitives.late import maxsim
from embedding_ttc.programs.primitives.chunking import Chunks, chunk_documents, split_sentences
from embedding_ttc.programs.primitives.lexical import BM25
W_S = 1.0
W_BM25 = 0.5
W_P1 = 0.3
W_P2 = 0.2

def program(Q, D, S, ctx):
    mask = candidate_mask(S.shape[0], S.shape[1], ctx.candidates)
    # Score each document by its best sentence (M = chunk_scores(Q, ctx, "sentence", "max", mask))
    M = chunk_scores(Q, ctx, "sentence", "max", mask)

    # Score with prefixes of the dimensions as coarse channels, P1 = prefix_scores(Q, D, Q.shape[1] // 4) and P2 = prefix_scores(Q, D, Q.shape[1] // 2)
    P1 = prefix_scores(Q, D, Q.shape[1] // 4)
    P2 = prefix_scores(Q, D, Q.shape[1] // 2)

    # Fuse S with M and with P1, P2 as coarse channels
    channels = [S, M, P1, P2]
    weights = [W_S, 0.5 * W_BM25, W_P1, W_P2]
    fused = fuse(channels, weights, mask=mask)

    return fused.astype(np.float32)
