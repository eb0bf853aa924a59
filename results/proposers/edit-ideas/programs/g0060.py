"""adds Rocchio pseudo-relevance feedback (the suggested idea)

Novelty: adds Rocchio pseudo-relevance feedback (the suggested idea)
Hypothesis: 
Parent: g0057
Edit: the reply's whole program (no block applied)
"""

import numpy as np
from embedding_ttc.programs.primitives.channels import bm25_scores, fuse
from embedding_ttc.programs.primitives.scores import candidate_mask, zscore_cols, zscore_rows
from embedding_ttc.programs.primitives.lexical import query_term_coverage
from embedding_ttc.programs.primitives.channels import prefix_scores
from embedding_ttc.programs.primitives.channels import prf_scores

def program(Q, D, S, ctx):
    B = bm25_scores(ctx)  # B: Okapi BM25 of every document for every query
    C = query_term_coverage(ctx.query_texts, ctx.doc_texts)  # C: Fraction of each query's distinct terms that occur in each document
    channels = [S, B, C]  # list of channels
    weights = [1.0, 0.5, 0.5]  # weights for each channel
    mask = candidate_mask(S.shape[0], S.shape[1], ctx.candidates)  # build the candidate mask from ctx.candidates
    S = fuse(channels, weights, mask=mask, method="zscore")  # fuse channels with S by z-scores with weights
    # Score-distribution analysis
    zscore_S = zscore_rows(S, mask)  # zscore the rows of S
    zscore_C = zscore_cols(S, mask)  # zscore the columns of S
    scores = []
    for row in zscore_S:
        scores.append(np.max(row) - np.partition(row, 10)[10])
    scores = np.array(scores)
    per_query_weights = 1 / scores[0]
    per_query_weights /= np.sum(per_query_weights)
    S = fuse([S, zscore_C], [per_query_weights, 1], mask=mask, method="zscore")
    # Rocchio pseudo-relevance feedback
    P = prf_scores(Q, D, S, k=3, alpha=0.5, mask=mask)  # the moved query's cosine matrix
    P2 = prf_scores(Q, D, P, k=3, alpha=0.5, mask=mask)  # the second round fed by the first one's ranking
    channels.append(P2)  # add the Rocchio pseudo-relevance feedback channel
    weights.append(0.5)  # add the Rocchio pseudo-relevance feedback weight
    S = fuse(channels, weights, mask=mask, method="zscore")  # fuse the channels with S
    return S.copy()  # an example: this block changes only the comment
