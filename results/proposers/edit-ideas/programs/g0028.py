"""Adds Score-distribution analysis (the suggested idea)

Novelty: Adds Score-distribution analysis (the suggested idea)
Hypothesis: 
Parent: g0000-P0
Edit: 2 block(s) placed (exact, exact)
"""
from embedding_ttc.programs.primitives.scores import zscore_cols, zscore_rows

import numpy as np
from collections import Counter

def program(Q, D, S, ctx):
    # Calculate the z-score of each row and column
    S_zscore_rows = zscore_rows(S)
    S_zscore_cols = zscore_cols(S)

    # Define a weight for each row based on the gap between the best and 10th best score
    gap_weights = []
    for i in range(S.shape[0]):
        sorted_scores = np.sort(S_zscore_rows[i])
        if len(sorted_scores) < 10:
            gap_weights.append(1.0)  # All scores are the same if there are fewer than 10 scores
        else:
            gap_weights.append(sorted_scores[1] / sorted_scores[9])

    # Create a new channel with the weighted z-score of each row
    new_channel = []
    for i in range(S.shape[0]):
        for j in range(S.shape[1]):
            new_channel.append(S_zscore_rows[i][j] * gap_weights[i])

    # Fuse the original channels with the new channel
    merged_channels = [S_zscore_rows, new_channel]

    return np.array(merged_channels)
