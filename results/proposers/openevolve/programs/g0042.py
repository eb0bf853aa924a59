from embedding_ttc.programs.primitives.channels import bm25_scores, mask_for, chunk_scores, fuse, prefix_scores, prf_scores, query_view_scores, view_scores
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
    mask = mask_for(ctx, S)  # None, or (n_q, n_d) bool: each query's candidates
    
    # Query Encoding
    query_embeddings = ctx.encode_fn(ctx.query_texts, view="retrieval.query", dim=None, max_length=None)
    
    # Document Encoding
    doc_embeddings = ctx.encode_fn(ctx.doc_texts, view="retrieval.passage", dim=None, max_length=None)
    
    # Cosine Matrix Calculation with Multiple Approaches
    cosine_matrix_bm25 = np.dot(query_embeddings, doc_embeddings.T)
    cosine_matrix_chunked = chunk_scores(Q, ctx, unit='sentence', reduce='max')
    cosine_matrix_prefix = prefix_scores(Q, D, dims=5)  # Example: use the first 5 dimensions
    
    # Fuse Channels
    channels = [cosine_matrix_bm25, cosine_matrix_chunked, cosine_matrix_prefix]
    fused_scores = fuse(channels, method='zscore', weights=None)
    
    return fused_scores
    # EVOLVE-BLOCK-END