"""Structural program: sent_maxsim + prf_soft + consensus by reciprocal rank fusion, 1 feedback round.

Novelty: Relative to g0023, switches a SoftCentroid-refined query to raw scores (was column-then-row z-scores); fuses by reciprocal rank fusion instead of a sum of row z-scores; replaces BM25 with MaxSim over sentences [genome sent_maxsim:row+prf_soft:none+consensus:both|rrf|1|softcentroid].
Hypothesis: Fusing MaxSim over sentences, a SoftCentroid-refined query and each document's consensus with the dense top-K by reciprocal rank fusion should raise nDCG@10 on every task, because the best-matching part of a long document carries the evidence that one pooled vector dilutes; a score-weighted centroid of the top documents sharpens the query; relevant documents resemble each other, so agreement with the dense head is evidence an isolated high cosine lacks; 1 softcentroid feedback round then pull each query toward its fused top-K.
Parent: g0023
Genome: {"channels": {"sent_maxsim": "row", "prf_soft": "none", "consensus": "both"}, "fusion": "rrf", "rounds": 1, "refine": "softcentroid"}
"""

import numpy as np

from embedding_ttc.programs.primitives.chunking import (
    MAX_CHUNKS_PER_DOC,
    chunk_documents,
    split_sentences,
)
from embedding_ttc.programs.primitives.feedback import centroid, soft_centroid_query
from embedding_ttc.programs.primitives.late import maxsim
from embedding_ttc.programs.primitives.scores import (
    RRF_K,
    candidate_mask,
    rrf,
    top_k_indices,
    zscore_cols,
    zscore_rows,
)

CONSENSUS_K = 10
FEEDBACK_K = 5
SOFT_TAU = 1.0
SOFT_ALPHA = 0.5


def program(Q, D, S, ctx):
    n_q, n_d = S.shape
    mask = candidate_mask(n_q, n_d, ctx.candidates)
    sentences = chunk_documents(
        ctx.doc_texts, split_sentences, max_chunks_per_doc=MAX_CHUNKS_PER_DOC
    )
    with ctx.index_time():
        sentences_vectors = ctx.encode_fn(sentences.texts, "retrieval.passage")
    sent_maxsim = maxsim(Q, sentences_vectors, sentences.owner, n_d, mask=mask)
    prf_soft = soft_centroid_query(Q, D, S, mask=mask) @ D.T
    heads = top_k_indices(S, CONSENSUS_K, mask)
    head_centroids = np.array([centroid(D, rows) for rows in heads], dtype=np.float32)
    consensus = head_centroids.reshape(n_q, D.shape[1]) @ D.T
    channels = [
        zscore_rows(sent_maxsim, mask),
        prf_soft,
        zscore_rows(zscore_cols(consensus, mask), mask),
    ]
    fused = rrf(channels, mask=mask, k=RRF_K)
    query = Q
    # feedback round 1: refine the query from the fused top-K, rescore D
    query = soft_centroid_query(
        query, D, zscore_rows(fused, mask), k=FEEDBACK_K, tau=SOFT_TAU, alpha=SOFT_ALPHA, mask=mask
    )
    fused = rrf([fused, query @ D.T], mask=mask, k=RRF_K)
    if mask is not None:
        fused = np.where(mask, fused, 0.0)
    return fused.astype(np.float32)
