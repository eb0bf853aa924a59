import numpy as np
# Import required modules
from embedding_ttc.programs.primitives.channels import fuse
from embedding_ttc.programs.primitives.scores import candidate_mask
from embedding_ttc.programs.primitives.lexical import BM25
from embedding_ttc.programs.primitives.scores import rrf
from embedding_ttc.programs.primitives.lexical import query_term_coverage
from embedding_ttc.programs.primitives.scores import zscore_rows
from embedding_ttc.programs.primitives.scores import zscore_cols
from embedding_ttc.programs.primitives.feedback import soft_centroid_query

# Module-level constants
W_S = 1.0
W_BM25 = 0.5
W_QTC = 0.5

# Define the retrieval program
def program(Q, D, S, ctx):
    # Get mask for candidate columns
    mask = candidate_mask(S.shape[0], S.shape[1], ctx.candidates)

    # Calculate z-scores for rows and columns
    zscores_rows_S = zscore_rows(S, mask)
    zscores_cols_S = zscore_cols(S, mask)

    # Measure how peaked each row is
    row_peaks = np.sort(zscores_rows_S, axis=1)[:, -1] - np.sort(zscores_rows_S, axis=1)[:, -2]

    # Build weights for the two channels based on row peaks
    weights = row_peaks / np.max(row_peaks)

    # Fuse the channels with S using reciprocal rank fusion
    return fuse([S, zscores_rows_S, zscores_cols_S], [W_S, W_BM25, W_QTC], mask=mask, method="rrf")
