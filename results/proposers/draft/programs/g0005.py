import numpy as np
from embedding_ttc.programs.primitives.channels import fuse, prefix_scores
from embedding_ttc.programs.primitives.scores import candidate_mask, top_k_indices, zscore_rows, zscore_cols
from embedding_ttc.programs.primitives.feedback import soft_centroid_query
from embedding_ttc.programs.primitives.lexical import BM25, query_term_coverage
from embedding_ttc.programs.primitives.chunking import Chunks, chunk_documents, split_sentences
from embedding_ttc.programs.primitives.late import maxsim
from embedding_ttc.programs.primitives.chunking import Chunks, chunk_documents, split_sentences

W_S = 1.0
W_P = 0.5


def program(Q, D, S, ctx):
    mask = candidate_mask(S.shape[0], S.shape[1], ctx.candidates)
    S_prefix = prefix_scores(Q, D, 1)  # (n_q, n_d); documents encoded once
    S_prefix_sorted = np.sort(S_prefix, axis=1)
    S_prefix_gap = S_prefix_sorted[:, 1] - S_prefix_sorted[:, 0]
    S_prefix_weights = 1.0 / S_prefix_gap
    S_prefix_weights /= np.sum(S_prefix_weights)
    S_prefix_rescore = S_prefix * S_prefix_weights[:, None]
    S_merged = fuse([S, S_prefix_rescore], [W_S, W_P], mask=mask)
    return S_merged.astype(np.float32)
