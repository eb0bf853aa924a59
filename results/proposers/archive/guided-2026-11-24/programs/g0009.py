"""Structural program: half_dim + sent_topmean + bm25 + consensus by reciprocal rank fusion, 0 feedback rounds.

Novelty: Relative to g0003, adds the Matryoshka half-dimension cosine (column-then-row z-scores); adds each document's consensus with the dense top-K (column z-scores); (the chosen change alone repeats a known program) [genome half_dim:both+sent_topmean:row+bm25:row+consensus:col|rrf|0].
Hypothesis: Adding the Matryoshka half-dimension cosine channel (row z-scores) to the retrieval program could potentially raise nDCG@10 on every task because this channel effectively normalizes the relevance of the top-ranked documents across different tasks, making it easier for models to identify the most sal
Parent: g0003
Genome: {"channels": {"half_dim": "both", "sent_topmean": "row", "bm25": "row", "consensus": "col"}, "fusion": "rrf", "rounds": 0, "refine": "rocchio"}
"""

import numpy as np

from embedding_ttc.programs.primitives.chunking import (
    MAX_CHUNKS_PER_DOC,
    chunk_documents,
    split_sentences,
)
from embedding_ttc.programs.primitives.feedback import centroid
from embedding_ttc.programs.primitives.late import topmeansim
from embedding_ttc.programs.primitives.lexical import BM25
from embedding_ttc.programs.primitives.scores import (
    RRF_K,
    candidate_mask,
    rrf,
    top_k_indices,
    zscore_cols,
    zscore_rows,
)

NORM_FLOOR = 1e-12
CONSENSUS_K = 10


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
    sentences = chunk_documents(
        ctx.doc_texts, split_sentences, max_chunks_per_doc=MAX_CHUNKS_PER_DOC
    )
    with ctx.index_time():
        sentences_vectors = ctx.encode_fn(sentences.texts, "retrieval.passage")
    sent_topmean = topmeansim(Q, sentences_vectors, sentences.owner, n_d, mask=mask)
    bm25 = BM25.fit(ctx.doc_texts).scores(ctx.query_texts)
    heads = top_k_indices(S, CONSENSUS_K, mask)
    head_centroids = np.array([centroid(D, rows) for rows in heads], dtype=np.float32)
    consensus = head_centroids.reshape(n_q, D.shape[1]) @ D.T
    channels = [
        zscore_rows(zscore_cols(half_dim, mask), mask),
        zscore_rows(sent_topmean, mask),
        zscore_rows(bm25, mask),
        zscore_cols(consensus, mask),
    ]
    fused = rrf(channels, mask, k=RRF_K)
    if mask is not None:
        fused = np.where(mask, fused, 0.0)
    return fused.astype(np.float32)
