from typing import *
import numpy as np

def program(Q, D, S, ctx):
    # EVOLVE-BLOCK-START
    mask = mask_for(ctx, S)  # None, or (n_q, n_d) bool: each query's candidates
    lexical = bm25_scores(ctx)  # (n_q, n_d) BM25 of the query and document texts
    chunked_document_scores = chunk_scores(D, ctx)  # Document scores after chunking
    combined_score = fuse([query_normalized, chunked_document_scores], weights=None, method='zscore')  # Fused score
    return combined_score  # float32 (n_q, n_d)
    # EVOLVE-BLOCK-END

def mask_for(ctx, S):
    """Build the `(n_q, n_d)` candidate mask from `Context.candidates`."""
    if ctx.candidates is None:
        return np.zeros_like(S, dtype=bool)
    else:
        return np.isin(ctx.doc_ids, ctx.candidates)

def normalize_query(Q):
    """Normalize query embeddings to have a unit L2 norm."""
    l2_norm = np.linalg.norm(Q, axis=1)
    normalized_Q = Q / l2_norm[:, np.newaxis]
    return normalized_Q

def chunk_scores(D, ctx, unit='sentence', reduce='max', mask=None):
    """Documents scored by pieces (unit sentence|sentence…)."""
    # Assuming D is already encoded as a numpy array
    if mask is None:
        mask = np.ones_like(D)
    
    chunks = []
    for i in range(0, len(D), ctx.doc_lengths[i]):
        chunk = D[i:i+ctx.doc_lengths[i]]
        chunks.append(chunk)

    chunk_scores = []
    for chunk in chunks:
        scores = np.dot(normalized_query(np.array([chunk])), S.T)
        if reduce == 'max':
            chunk_scores.append(np.max(scores))
        elif reduce == 'sum':
            chunk_scores.append(np.sum(scores))

    return np.array(chunk_scores)

def fuse(channels, weights=None, mask=None, method='zscore'):
    """Fuse channels: weighted sum of row z-scores (method zsco…)."""
    if mask is None:
        mask = np.ones_like(channels[0])
    
    if weights is None:
        weights = np.ones_like(channels)
    
    fused_scores = []
    for channel in channels:
        scores = np.dot(channel, S.T)  # Cosine score
        zscores = zscore_rows(scores, mask=mask)  # Standardise each row over its candidates: `(s - mean) / std` (population std).
        if method == 'zscore':
            fused_scores.append(np.sum(zscores * weights))
        elif method == 'mean':
            fused_scores.append(np.mean(zscores * weights))

    return np.array(fused_scores)