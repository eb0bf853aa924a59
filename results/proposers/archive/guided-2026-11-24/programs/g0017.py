"""Structural program: half_dim + para_maxsim + bm25 by reciprocal rank fusion, 1 feedback round.

Novelty: Relative to g0003, adds the Matryoshka half-dimension cosine (row z-scores); changes TopMeanSim over sentences to MaxSim over paragraphs; switches the Matryoshka half-dimension cosine to column z-scores (was row z-scores); adds feedback round 1 (rocchio refinement of the fused top-K); (the chosen change alone repeats a known program) [genome half_dim:col+para_maxsim:row+bm25:row|rrf|1|rocchio].
Hypothesis: Adding the Matryoshka half-dimension cosine channel (row z-scores) to the retrieval program could potentially raise nDCG@10 on every task because this channel effectively normalizes the relevance of sentence embeddings, improving the quality of the queries and documents. The Matryoshka half-dim Cos,
Parent: g0003
Genome: {"channels": {"half_dim": "col", "para_maxsim": "row", "bm25": "row"}, "fusion": "rrf", "rounds": 1, "refine": "rocchio"}
"""

import numpy as np

from embedding_ttc.programs.primitives.chunking import (
    MAX_CHUNKS_PER_DOC,
    chunk_documents,
    split_paragraphs,
)
from embedding_ttc.programs.primitives.feedback import centroid, rocchio
from embedding_ttc.programs.primitives.late import maxsim
from embedding_ttc.programs.primitives.lexical import BM25
from embedding_ttc.programs.primitives.scores import (
    RRF_K,
    bottom_k_indices,
    candidate_mask,
    rrf,
    top_k_indices,
    zscore_cols,
    zscore_rows,
)

NORM_FLOOR = 1e-12
FEEDBACK_K = 5
ROCCHIO_BETA = 0.6
ROCCHIO_GAMMA = 0.2


def _rocchio_query(query, D, scores, mask):
    """Rocchio (1971): toward the top-K centroid, away from the bottom-K centroid."""
    top = top_k_indices(scores, FEEDBACK_K, mask)
    bottom = bottom_k_indices(scores, FEEDBACK_K, mask)
    positive = np.array([centroid(D, rows) for rows in top], dtype=np.float32)
    negative = np.array([centroid(D, rows) for rows in bottom], dtype=np.float32)
    return rocchio(
        query,
        positive.reshape(query.shape),
        negative.reshape(query.shape),
        alpha=1.0,
        beta=ROCCHIO_BETA,
        gamma=ROCCHIO_GAMMA,
    )


def program(Q, D, S, ctx):
    n_q, n_d = S.shape
    mask = candidate_mask(n_q, n_d, ctx.candidates)
    half = max(1, Q.shape[1] // 2)
    q_half = Q[:, :half] / np.maximum(
        np.linalg.norm(Q[:, :half], axis=1, keepdims=True), NORM_FLOOR
    )
    d_half = D[:, :half] / np.maximum(
        np.linalg.norm(D[:, :half], axis=1, keepdims=True), NORM_FLOOR
    )
    half_dim = q_half @ d_half.T
    paragraphs = chunk_documents(
        ctx.doc_texts, split_paragraphs, max_chunks_per_doc=MAX_CHUNKS_PER_DOC
    )
    with ctx.index_time():
        paragraphs_vectors = ctx.encode_fn(paragraphs.texts, "retrieval.passage")
    para_maxsim = maxsim(Q, paragraphs_vectors, paragraphs.owner, n_d, mask=mask)
    bm25 = BM25.fit(ctx.doc_texts).scores(ctx.query_texts)
    channels = [
        zscore_cols(half_dim, mask),
        zscore_rows(para_maxsim, mask),
        zscore_rows(bm25, mask),
    ]
    fused = rrf(channels, mask, k=RRF_K)
    query = Q
    # feedback round 1: refine the query from the fused top-K, rescore D
    query = _rocchio_query(query, D, fused, mask)
    fused = rrf([fused, query @ D.T], mask, k=RRF_K)
    if mask is not None:
        fused = np.where(mask, fused, 0.0)
    return fused.astype(np.float32)
