"""Structural program: sent_maxsim + bm25 + consensus by a convex combination (weight 0.6 shared by the channels after the first), 0 feedback rounds.

Novelty: Relative to g0018, replaces the dense cosine S with MaxSim over sentences; adds each document's consensus with the dense top-K (per-query min-max) [genome sent_maxsim:row+bm25:row+consensus:minmax|convex:0.6|0].
Hypothesis: Fusing MaxSim over sentences, BM25 and each document's consensus with the dense top-K by a convex combination (weight 0.6 shared by the channels after the first) should raise nDCG@10 on every task, because the best-matching part of a long document carries the evidence that one pooled vector dilutes; BM25 rewards exact rare terms (names, numbers) that embeddings blur; relevant documents resemble each other, so agreement with the dense head is evidence an isolated high cosine lacks.
Parent: g0018
Genome: {"channels": {"sent_maxsim": "row", "bm25": "row", "consensus": "minmax"}, "fusion": "convex", "rounds": 0, "refine": "rocchio", "share": 0.6}
"""

import numpy as np

from embedding_ttc.programs.primitives.chunking import (
    MAX_CHUNKS_PER_DOC,
    chunk_documents,
    split_sentences,
)
from embedding_ttc.programs.primitives.feedback import centroid
from embedding_ttc.programs.primitives.late import maxsim
from embedding_ttc.programs.primitives.lexical import BM25
from embedding_ttc.programs.primitives.scores import (
    candidate_mask,
    minmax_rows,
    top_k_indices,
    zscore_rows,
)

CONSENSUS_K = 10
FUSION_SHARE = 0.6


def program(Q, D, S, ctx):
    n_q, n_d = S.shape
    mask = candidate_mask(n_q, n_d, ctx.candidates)
    sentences = chunk_documents(
        ctx.doc_texts, split_sentences, max_chunks_per_doc=MAX_CHUNKS_PER_DOC
    )
    with ctx.index_time():
        sentences_vectors = ctx.encode_fn(sentences.texts, "retrieval.passage")
    sent_maxsim = maxsim(Q, sentences_vectors, sentences.owner, n_d, mask=mask)
    bm25 = BM25.fit(ctx.doc_texts).scores(ctx.query_texts)
    heads = top_k_indices(S, CONSENSUS_K, mask)
    head_centroids = np.array([centroid(D, rows) for rows in heads], dtype=np.float32)
    consensus = head_centroids.reshape(n_q, D.shape[1]) @ D.T
    channels = [
        zscore_rows(sent_maxsim, mask),
        zscore_rows(bm25, mask),
        minmax_rows(consensus, mask),
    ]
    fused = np.float32(1.0 - FUSION_SHARE) * channels[0]
    for channel in channels[1:]:
        fused = fused + np.float32(FUSION_SHARE / (len(channels) - 1)) * channel
    if mask is not None:
        fused = np.where(mask, fused, 0.0)
    return fused.astype(np.float32)
