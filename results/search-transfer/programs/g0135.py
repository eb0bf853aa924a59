"""Structural program: dense + sent_topmean + bigram + rare_idf + anti_hub by a convex combination (weight 0.8 shared by the channels after the first), 1 feedback round.

Novelty: Relative to g0093, adds TopMeanSim over sentences (z-scores over the dense top-K); switches rare-term IDF to per-query min-max (was column z-scores); adds feedback round 1 (rocchio refinement of the fused top-K) [genome dense:row+sent_topmean:local+bigram:minmax+rare_idf:minmax+anti_hub:none|convex:0.8|1|rocchio].
Hypothesis: Fusing the dense cosine S, TopMeanSim over sentences, word-bigram overlap, rare-term IDF and the distance from the candidates' centroid (a hubness correction) by a convex combination (weight 0.8 shared by the channels after the first) should raise nDCG@10 on every task, because the best-matching part of a long document carries the evidence that one pooled vector dilutes; phrases matched in order are stronger evidence than single words; the rarest query terms identify the few documents that can answer; hub documents sit near every candidate set's centre and crowd every ranking; 1 rocchio feedback round then pull each query toward its fused top-K.
Parent: g0093
Genome: {"channels": {"dense": "row", "sent_topmean": "local", "bigram": "minmax", "rare_idf": "minmax", "anti_hub": "none"}, "fusion": "convex", "rounds": 1, "refine": "rocchio", "share": 0.8}
"""

import numpy as np

from embedding_ttc.programs.primitives.chunking import (
    MAX_CHUNKS_PER_DOC,
    chunk_documents,
    split_sentences,
)
from embedding_ttc.programs.primitives.feedback import centroid, rocchio
from embedding_ttc.programs.primitives.late import topmeansim
from embedding_ttc.programs.primitives.lexical import bigram_overlap, rare_term_idf
from embedding_ttc.programs.primitives.scores import (
    ZSCORE_EPS,
    bottom_k_indices,
    candidate_mask,
    top_k_indices,
    zscore_rows,
)

LOCAL_K = 20
NORM_FLOOR = 1e-12
FEEDBACK_K = 5
ROCCHIO_BETA = 0.6
ROCCHIO_GAMMA = 0.2
FUSION_SHARE = 0.8


def _local_zscore(scores, dense, mask):
    """Z-scores by the mean and deviation of each query's top LOCAL_K candidates under dense.

    Candidates outside that head are clipped to the head's range of z-scores (the range holds
    0, the head's mean); a head without spread gives 0; non-candidates are 0.
    """
    cand = np.ones(np.shape(scores), dtype=bool) if mask is None else mask
    x = np.where(cand, scores, 0.0).astype(np.float64)
    head = np.zeros(x.shape, dtype=bool)
    for row, top in enumerate(top_k_indices(dense, LOCAL_K, mask)):
        head[row, top] = True
    size = np.maximum(head.sum(axis=1, keepdims=True), 1)
    mean = np.where(head, x, 0.0).sum(axis=1, keepdims=True) / size
    dev = np.where(head, x - mean, 0.0)
    std = np.sqrt((dev * dev).sum(axis=1, keepdims=True) / size)
    spread = std > ZSCORE_EPS
    z = np.where(spread, (x - mean) / np.where(spread, std, 1.0), 0.0)
    low = z.min(axis=1, keepdims=True, where=head, initial=0.0)
    high = z.max(axis=1, keepdims=True, where=head, initial=0.0)
    z = np.where(head, z, np.clip(z, low, high))
    return np.where(cand, z, 0.0).astype(np.float32)


def _minmax_rows(scores, mask):
    """Min-max over each query's candidates: its best candidate 1, its worst 0.

    A query whose candidates span at most ZSCORE_EPS (one candidate, a constant row) is all 0,
    as the z-scores treat a row without spread; non-candidates are 0.
    """
    cand = np.ones(np.shape(scores), dtype=bool) if mask is None else mask
    x = np.where(cand, scores, 0.0).astype(np.float64)
    low = x.min(axis=1, keepdims=True, where=cand, initial=np.inf)
    high = x.max(axis=1, keepdims=True, where=cand, initial=-np.inf)
    span = high - low
    spread = span > ZSCORE_EPS
    scaled = np.where(spread, (x - low) / np.where(spread, span, 1.0), 0.0)
    return np.where(cand, scaled, 0.0).astype(np.float32)


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
    sentences = chunk_documents(
        ctx.doc_texts, split_sentences, max_chunks_per_doc=MAX_CHUNKS_PER_DOC
    )
    with ctx.index_time():
        sentences_vectors = ctx.encode_fn(sentences.texts, "retrieval.passage")
    sent_topmean = topmeansim(Q, sentences_vectors, sentences.owner, n_d, mask=mask)
    bigram = bigram_overlap(ctx.query_texts, ctx.doc_texts)
    rare_idf = rare_term_idf(ctx.query_texts, ctx.doc_texts)
    members = np.ones((1, n_d), dtype=np.float32)
    if mask is not None:
        members = mask.astype(np.float32)
    pool_centroids = members @ D
    pool_centroids /= np.maximum(
        np.linalg.norm(pool_centroids, axis=1, keepdims=True), NORM_FLOOR
    )
    anti_hub = np.broadcast_to(-(pool_centroids @ D.T), (n_q, n_d)).copy()
    channels = [
        zscore_rows(S, mask),
        _local_zscore(sent_topmean, S, mask),
        _minmax_rows(bigram, mask),
        _minmax_rows(rare_idf, mask),
        anti_hub,
    ]
    fused = np.float32(1.0 - FUSION_SHARE) * channels[0]
    for channel in channels[1:]:
        fused = fused + np.float32(FUSION_SHARE / (len(channels) - 1)) * channel
    query = Q
    # feedback round 1: refine the query from the fused top-K, rescore D
    query = _rocchio_query(query, D, fused, mask)
    fused = zscore_rows(fused, mask) + zscore_rows(query @ D.T, mask)
    if mask is not None:
        fused = np.where(mask, fused, 0.0)
    return fused.astype(np.float32)
