"""adds Score-distribution analysis (the suggested idea)

Novelty: adds Score-distribution analysis (the suggested idea)
Hypothesis: 
Parent: g0027
Edit: 5 block(s) placed (exact, exact, exact, exact, exact)
"""
import numpy as np

from embedding_ttc.programs.primitives.channels import prefix_scores
from embedding_ttc.programs.primitives.channels import bm25_scores, mask_for
from embedding_ttc.programs.primitives.scores import rrf

def program(Q, D, S, ctx):
    # Add the idea of Score-distribution analysis as a new channel
    prefix1 = prefix_scores(Q, D, Q.shape[1] // 4)  # an example: this block changes only the comment
    prefix2 = prefix_scores(Q, D, Q.shape[1] // 2)  # an example: this block changes only the comment
    mask = mask_for(ctx, S)  # an example: this block changes only the comment
    lexical = bm25_scores(ctx)  # (n_q, n_d) BM25 of the query and document texts
    # Score distribution analysis
    def score_distribution(channel):
        # Compute the gap between the best and 10th best score
        sorted_scores = np.sort(channel)
        gap = sorted_scores[1] - sorted_scores[9]
        return gap

    # Create weights based on the gap between best and 10th best score
    weights = np.array([score_distribution(S[i]) for i in range(S.shape[0])])

    # Mix the two channels with per-query weights
    result = rrf([lexical, S], mask=mask, k=60, ties='average')
