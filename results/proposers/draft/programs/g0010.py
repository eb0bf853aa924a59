from embedding_ttc.programs.primitives.scores import zscore_cols, zscore_rows
# Novelty: combines z-scores from the cosine scores with lexical evidence.
# Hypothesis: by fusing the cosine scores with B and C, where B is a BM25 score…
# for each query and C is the query-term coverage for each query, we can enhance the…
# scores by giving more weight to documents that the query lacks in terms of vocabulary.
# This is similar to the Rocchio pseudo-relevance feedback method, but uses a different…
# approach by fusing the scores with a BM25 score and the query-term coverage for each query.

import numpy as np
from embedding_ttc.programs.primitives.channels import fuse, bm25_scores
from embedding_ttc.programs.primitives.lexical import query_term_coverage
from embedding_ttc.programs.primitives.scores import candidate_mask
from embedding_ttc.programs.primitives.feedback import soft_centroid_query
from embedding_ttc.programs.primitives.lexical import BM25, query_term_coverage
W_S = 1.0
W_BM25 = 0.5
W_QTC = 0.5

def program(Q, D, S, ctx):
    mask = candidate_mask(S.shape[0], S.shape[1], ctx.candidates)
    B = bm25_scores(ctx)
    C = query_term_coverage(ctx.query_texts, ctx.doc_texts)
    # Step 1: Remove hub documents close to every query
    z_scores_S = zscore_rows(S, mask)
    z_scores_C = zscore_cols(S, mask)
    # Step 2: Measure how peaked each row is
    max_scores = np.max(z_scores_S, axis=1)
    gap = max_scores - z_scores_S[np.argsort(max_scores)[::-1][:10]]
    # Step 3: Mix the two channels with per-query weights
    weights = gap / gap.mean()
    S_fused = fuse([S, B, C], [W_S, W_BM25, W_QTC], mask=mask, method="rrf", weights=weights)
    return S_fused.astype(np.float32)
