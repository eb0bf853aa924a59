"""Structural program: sent_topmean + rare_idf + consensus + anti_hub by a weighted sum, 1 feedback round.

Novelty: Relative to g0093, fuses by a weighted sum instead of a convex combination (weight 0.8 shared by the channels after the first); drops word-bigram overlap; replaces the dense cosine S with TopMeanSim over sentences; adds feedback round 1 (vprf refinement of the fused top-K); adds each document's consensus with the dense top-K (column-then-row z-scores) [genome sent_topmean:row+rare_idf:col+consensus:both+anti_hub:none|wsum|1|vprf].
Hypothesis: Fusing TopMeanSim over sentences, rare-term IDF, each document's consensus with the dense top-K and the distance from the candidates' centroid (a hubness correction) by a weighted sum should raise nDCG@10 on every task, because the best-matching part of a long document carries the evidence that one pooled vector dilutes; the rarest query terms identify the few documents that can answer; relevant documents resemble each other, so agreement with the dense head is evidence an isolated high cosine lacks; hub documents sit near every candidate set's centre and crowd every ranking; 1 vprf feedback round then pull each query toward its fused top-K.
Parent: g0093
Genome: {"channels": {"sent_topmean": "row", "rare_idf": "col", "consensus": "both", "anti_hub": "none"}, "fusion": "wsum", "rounds": 1, "refine": "vprf"}
"""

import numpy as np

from embedding_ttc.programs.primitives.chunking import (
    MAX_CHUNKS_PER_DOC,
    chunk_documents,
    split_sentences,
)
from embedding_ttc.programs.primitives.feedback import centroid, vprf_update
from embedding_ttc.programs.primitives.late import topmeansim
from embedding_ttc.programs.primitives.lexical import rare_term_idf
from embedding_ttc.programs.primitives.scores import (
    candidate_mask,
    top_k_indices,
    zscore_cols,
    zscore_rows,
)

CONSENSUS_K = 10
NORM_FLOOR = 1e-12
FEEDBACK_K = 5
VPRF_BETA = 0.3
CHANNEL_WEIGHTS = (1.0, 0.5, 0.5, 0.5)


def program(Q, D, S, ctx):
    n_q, n_d = S.shape
    mask = candidate_mask(n_q, n_d, ctx.candidates)
    sentences = chunk_documents(
        ctx.doc_texts, split_sentences, max_chunks_per_doc=MAX_CHUNKS_PER_DOC
    )
    with ctx.index_time():
        sentences_vectors = ctx.encode_fn(sentences.texts, "retrieval.passage")
    sent_topmean = topmeansim(Q, sentences_vectors, sentences.owner, n_d, mask=mask)
    rare_idf = rare_term_idf(ctx.query_texts, ctx.doc_texts)
    heads = top_k_indices(S, CONSENSUS_K, mask)
    head_centroids = np.array([centroid(D, rows) for rows in heads], dtype=np.float32)
    consensus = head_centroids.reshape(n_q, D.shape[1]) @ D.T
    members = np.ones((1, n_d), dtype=np.float32)
    if mask is not None:
        members = mask.astype(np.float32)
    pool_centroids = members @ D
    pool_centroids /= np.maximum(
        np.linalg.norm(pool_centroids, axis=1, keepdims=True), NORM_FLOOR
    )
    anti_hub = np.broadcast_to(-(pool_centroids @ D.T), (n_q, n_d)).copy()
    channels = [
        zscore_rows(sent_topmean, mask),
        zscore_cols(rare_idf, mask),
        zscore_rows(zscore_cols(consensus, mask), mask),
        anti_hub,
    ]
    fused = np.zeros((n_q, n_d), dtype=np.float32)
    for weight, channel in zip(CHANNEL_WEIGHTS, channels, strict=True):
        fused += np.float32(weight) * channel
    query = Q
    # feedback round 1: refine the query from the fused top-K, rescore D
    query = vprf_update(query, D, top_k_indices(fused, FEEDBACK_K, mask), VPRF_BETA)
    fused = zscore_rows(fused, mask) + zscore_rows(query @ D.T, mask)
    if mask is not None:
        fused = np.where(mask, fused, 0.0)
    return fused.astype(np.float32)
