"""Structural program: para_topmean + bm25 + bigram + prf_soft + consensus by a convex combination (weight 0.9 shared by the channels after the first), 0 feedback rounds.

Novelty: Relative to g0089, changes MaxSim over paragraphs to TopMeanSim over paragraphs; switches TopMeanSim over paragraphs to column-then-row z-scores (was column z-scores); replaces the dense cosine S with a SoftCentroid-refined query [genome para_topmean:both+bm25:row+bigram:col+prf_soft:row+consensus:none|convex:0.9|0].
Hypothesis: Fusing TopMeanSim over paragraphs, BM25, word-bigram overlap, a SoftCentroid-refined query and each document's consensus with the dense top-K by a convex combination (weight 0.9 shared by the channels after the first) should raise nDCG@10 on every task, because the best-matching part of a long document carries the evidence that one pooled vector dilutes; BM25 rewards exact rare terms (names, numbers) that embeddings blur; phrases matched in order are stronger evidence than single words; a score-weighted centroid of the top documents sharpens the query; relevant documents resemble each other, so agreement with the dense head is evidence an isolated high cosine lacks.
Parent: g0089
Genome: {"channels": {"para_topmean": "both", "bm25": "row", "bigram": "col", "prf_soft": "row", "consensus": "none"}, "fusion": "convex", "rounds": 0, "refine": "rocchio", "share": 0.9}
"""

import numpy as np

from embedding_ttc.programs.primitives.chunking import (
    MAX_CHUNKS_PER_DOC,
    chunk_documents,
    split_paragraphs,
)
from embedding_ttc.programs.primitives.feedback import centroid, soft_centroid_query
from embedding_ttc.programs.primitives.late import topmeansim
from embedding_ttc.programs.primitives.lexical import BM25, bigram_overlap
from embedding_ttc.programs.primitives.scores import (
    candidate_mask,
    top_k_indices,
    zscore_cols,
    zscore_rows,
)

CONSENSUS_K = 10
FUSION_SHARE = 0.9


def program(Q, D, S, ctx):
    n_q, n_d = S.shape
    mask = candidate_mask(n_q, n_d, ctx.candidates)
    paragraphs = chunk_documents(
        ctx.doc_texts, split_paragraphs, max_chunks_per_doc=MAX_CHUNKS_PER_DOC
    )
    with ctx.index_time():
        paragraphs_vectors = ctx.encode_fn(paragraphs.texts, "retrieval.passage")
    para_topmean = topmeansim(Q, paragraphs_vectors, paragraphs.owner, n_d, mask=mask)
    bm25 = BM25.fit(ctx.doc_texts).scores(ctx.query_texts)
    bigram = bigram_overlap(ctx.query_texts, ctx.doc_texts)
    prf_soft = soft_centroid_query(Q, D, S, mask=mask) @ D.T
    heads = top_k_indices(S, CONSENSUS_K, mask)
    head_centroids = np.array([centroid(D, rows) for rows in heads], dtype=np.float32)
    consensus = head_centroids.reshape(n_q, D.shape[1]) @ D.T
    channels = [
        zscore_rows(zscore_cols(para_topmean, mask), mask),
        zscore_rows(bm25, mask),
        zscore_cols(bigram, mask),
        zscore_rows(prf_soft, mask),
        consensus,
    ]
    fused = np.float32(1.0 - FUSION_SHARE) * channels[0]
    for channel in channels[1:]:
        fused = fused + np.float32(FUSION_SHARE / (len(channels) - 1)) * channel
    if mask is not None:
        fused = np.where(mask, fused, 0.0)
    return fused.astype(np.float32)
