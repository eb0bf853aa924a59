import numpy as np
# Novelty: fuses S with the documents re-encoded as queries using reciprocal rank fusion and lexical evidence.
# Hypothesis: measures the peakedness of each row of S and uses it to weight the BM25 and query_term_coverage scores.

from embedding_ttc.programs.primitives.channels import fuse, bm25_scores, prefix_scores
from embedding_ttc.programs.primitives.lexical import query_term_coverage
from embedding_ttc.programs.primitives.scores import candidate_mask, top_k_indices, rrf, zscore_rows, zscore_cols

W_S = 1.0
W_BM25 = 0.5
W_QTC = 0.5

def program(Q, D, S, ctx):
    mask = candidate_mask(S.shape[0], S.shape[1], ctx.candidates)

    # Measure the peakedness of each row of S
    row_peaks = zscore_rows(S, mask)

    # Calculate per-query weights based on the peakedness of the rows
    weights = np.exp(-row_peaks**2 / 10.0)  # Assuming a standard deviation of 10.0

    # Fuse the S channel with the BM25 and query_term_coverage channels
    B = bm25_scores(ctx)
    C = query_term_coverage(ctx.query_texts, ctx.doc_texts)
    return fuse([S, B, C], weights, mask=mask, method="rrf")
