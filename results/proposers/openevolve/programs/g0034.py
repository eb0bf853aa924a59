from typing import *
import numpy as np

def program(Q, D, S, ctx):
    # EVOLVE-BLOCK-START
    query_normalized = normalize_query(Q)  # Normalize query embeddings
    chunked_document_scores = chunk_scores(D, ctx, unit='sentence', reduce='max', mask=None)  # Document scores after chunking
    combined_score = fuse([query_normalized, chunked_document_scores], weights=None, method='zscore')  # Fused score
    return combined_score  # float32 (n_q, n_d)
    # EVOLVE-BLOCK-END

def normalize_query(Q):
    """Normalize query embeddings to have a unit L2 norm."""
    l2_norm = np.linalg.norm(Q, axis=1)
    normalized_Q = Q / l2_norm[:, np.newaxis]
    return normalized_Q