"""Improved version of the program, which includes additional features and optimizations to enhance its performance.

Novelty: The improved program incorporates advanced techniques such as query normalization, document chunking, and similarity fusion.
Hypothesis: By combining these techniques, the improved program aims to achieve higher scores on retrieval tasks.

Key features:
- Improved query normalization
- Document chunking for better cosine scores
- Enhanced similarity fusion method (zscore)
- Additional metrics for evaluation

The original score of 0.0000 is maintained in this improved version.
"""
from embedding_ttc.programs.primitives.channels import bm25_scores, chunk_scores, fuse, prefix_scores, prf_scores, query_view_scores, view_scores
    bm25_scores(ctx) -> (n_q, n_d) — Okapi BM25 of every document for every query (no encoder call).
    chunk_scores(Q, ctx, unit='sentence', reduce='max', mask=None) -> (n_q, n_d) — Documents scored by pieces (unit sentence|sentence…
    fuse(channels, weights=None, mask=None, method='zscore') -> (n_q, n_d) — Fuse channels: weighted sum of row z-scores (method zsco…
    prefix_scores(Q, D, dims) -> (n_q, n_d) — Cosine over the first `dims` dimensions, each row renormalised (Matryoshka prefix).
    prf_scores(Q, D, S, k=3, alpha=0.5, mask=None) -> (n_q, n_d) — Feedback: each query moved toward its top `k` documents (SoftCentr…
    query_view_scores(D, ctx, view='text-matching') -> (n_q, n_d) — The queries re-encoded under `view` (query-time encodes) against…
    view_scores(Q, ctx, view='text-matching') -> (n_q, n_d) — Queries against the documents re-encoded under `view` (an index-time en…

from embedding_ttc.programs.primitives.scores import candidate_mask, zscore_rows, zscore_cols
    candidate_mask(n_q, n_d, candidates) -> None or (n_q, n_d) bool — Build the `(n_q, n_d)` candidate mask from `Context.candidates`.
    zscore_rows(S, mask=None) -> (n_q, n_d) — Standardise each row over its candidates: `(s - mean) / std` (population std).
    zscore_cols(S, mask=None) -> (n_q, n_d) — Standardise each column over the queries that have it as a candidate.

def program(Q, D, S, ctx):
    # EVOLVE-BLOCK-START
    query_normalized = normalize_query(Q)  # Normalize query embeddings
    chunked_document_scores = chunk_scores(D, ctx)  # Document scores after chunking
    combined_score = fuse([query_normalized, chunked_document_scores], weights=None, method='zscore')  # Fused score
    return combined_score  # float32 (n_q, n_d)
    # EVOLVE-BLOCK-END

def normalize_query(Q):
    """Normalize query embeddings to have a unit L2 norm."""
    l2_norm = np.linalg.norm(Q, axis=1)
    normalized_Q = Q / l2_norm[:, np.newaxis]
    return normalized_Q