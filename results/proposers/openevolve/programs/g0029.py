import numpy as np

def program(Q, D, S, ctx):
    # EVOLVE-BLOCK-START
    mask = mask_for(ctx, S)  # None, or (n_q, n_d) bool: each query's candidates
    lexical = bm25_scores(ctx)  # (n_q, n_d) BM25 of the query and document texts
    chunked_document_scores = chunk_scores(D, ctx, unit='sentence', reduce='max', mask=None)  # Document scores after chunking
    combined_score = fuse([query_normalized, chunked_document_scores], weights=None, method='zscore')  # Fused score
    return combined_score  # float32 (n_q, n_d)
    # EVOLVE-BLOCK-END

def normalize_query(Q):
    """Normalize query embeddings to have a unit L2 norm."""
    l2_norm = np.linalg.norm(Q, axis=1)
    normalized_Q = Q / l2_norm[:, np.newaxis]
    return normalized_Q