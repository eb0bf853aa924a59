"""Adds a channel that uses the score distribution of each query to adjust the candidate scores.

Novelty: Adds a channel that uses the score distribution of each query to adjust the candidate scores.
Hypothesis: This channel will make the retrieval more robust by giving more weight to the most relevant documents.
Parent: g0002
Edit: 1 block(s) placed (exact)
"""
import numpy as np
from embedding_ttc.programs.primitives.scores import zscore_rows

from embedding_ttc.programs.primitives.channels import prefix_scores
from embedding_ttc.programs.primitives.channels import bm25_scores, mask_for
from embedding_ttc.programs.primitives.scores import rrf


def program(Q, D, S, ctx):
    # Add the idea of Score-distribution analysis as a new channel
    prefix1 = prefix_scores(Q, D, Q.shape[1] // 4)  # (n_q, Q.shape[1] // 4)
    prefix2 = prefix_scores(Q, D, Q.shape[1] // 2)  # (n_q, Q.shape[1] // 2)
    mask = mask_for(ctx, S)  # an example: this block changes only the comment
    lexical = bm25_scores(ctx)  # (n_q, n_d) BM25 of the query and document texts

    # Score-distribution analysis channel
    score_distributions = zscore_rows(S, mask)  # (n_q, n_d) BM25 scores
    top_scores = np.max(score_distributions, axis=1)  # (n_q,) highest score of each query
    # Calculate the gap between the best and 10th best score
    gaps = top_scores[None, :] - top_scores[:, None]  # (n_q, n_q)
    gaps[gaps < 0] = 0  # Ensure gaps are non-negative
    gaps = np.sort(gaps, axis=1)  # (n_q, n_q) sorted gaps
    # Calculate the weight for each query based on the gap
    weights = 1 - gaps[:, -2] / gaps[:, -1]  # (n_q,) weight for each query based on the gap
    # Apply the weights to the lexical channel
    weighted_lexical = weighted_sum([lexical, score_distributions], weights)  # float32 (n_q, n_d)

    return rrf([lexical, score_distributions], mask=mask)  # float32 (n_q, n_d)
