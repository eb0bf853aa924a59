from embedding_ttc.programs.primitives.channels import prf_scores
import numpy as np
from embedding_ttc.programs.primitives.channels import fuse, query_view_scores, view_scores
from embedding_ttc.programs.primitives.scores import candidate_mask, top_k_indices
from embedding_ttc.programs.primitives.feedback import soft_centroid_query

K = 3
ALPHA = 0.7
K2 = 2
ALPHA2 = 0.6

def program(Q, D, S, ctx):
    mask = candidate_mask(S.shape[0], S.shape[1], ctx.candidates)
    P = prf_scores(Q, D, S, k=K, alpha=ALPHA, mask=mask)  # (n_q, n_d) — Feedback: each query moved toward its top `k` documents (SoftCentr…
    P2 = prf_scores(Q, D, P, k=K2, alpha=ALPHA2, mask=mask)  # (n_q, n_d) — Feedback: each query moved toward its top `k` documents (SoftCentr…
    P1 = query_view_scores(D, ctx, view='text-matching')  # (n_q, n_d) — The queries re-encoded under `view` (query-time encodes) against…
    P2 = view_scores(Q, ctx, view='text-matching')  # (n_q, n_d) — Queries against the documents re-encoded under `view` (an index-time en…

    out = fuse([S, P1, P2], [1.0, 0.5, 0.5], mask=mask)  # float32 (n_q, n_d)
    return out.astype(np.float32)
