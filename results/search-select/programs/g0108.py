"""Structural program: pair_topmean + bm25 + bigram + consensus by a weighted sum, 0 feedback rounds.

Novelty: Relative to g0089, fuses by a weighted sum instead of a convex combination (weight 0.9 shared by the channels after the first); drops the dense cosine S; replaces MaxSim over paragraphs with TopMeanSim over paragraphs; changes TopMeanSim over paragraphs to TopMeanSim over sentence pairs [genome pair_topmean:col+bm25:row+bigram:col+consensus:none|wsum|0].
Hypothesis: Fusing TopMeanSim over sentence pairs, BM25, word-bigram overlap and each document's consensus with the dense top-K by a weighted sum should raise nDCG@10 on every task, because the best-matching part of a long document carries the evidence that one pooled vector dilutes; BM25 rewards exact rare terms (names, numbers) that embeddings blur; phrases matched in order are stronger evidence than single words; relevant documents resemble each other, so agreement with the dense head is evidence an isolated high cosine lacks.
Parent: g0089
Genome: {"channels": {"pair_topmean": "col", "bm25": "row", "bigram": "col", "consensus": "none"}, "fusion": "wsum", "rounds": 0, "refine": "rocchio"}
"""

import numpy as np

from embedding_ttc.programs.primitives.chunking import (
    MAX_CHUNKS_PER_DOC,
    chunk_documents,
    sentence_pairs,
    split_sentences,
)
from embedding_ttc.programs.primitives.feedback import centroid
from embedding_ttc.programs.primitives.late import topmeansim
from embedding_ttc.programs.primitives.lexical import BM25, bigram_overlap
from embedding_ttc.programs.primitives.scores import (
    candidate_mask,
    top_k_indices,
    zscore_cols,
    zscore_rows,
)

CONSENSUS_K = 10
CHANNEL_WEIGHTS = (1.0, 0.5, 0.5, 0.5)


def _sentence_pairs(text):
    """Consecutive sentence pairs of a text."""
    return sentence_pairs(split_sentences(text))


def program(Q, D, S, ctx):
    n_q, n_d = S.shape
    mask = candidate_mask(n_q, n_d, ctx.candidates)
    pairs = chunk_documents(
        ctx.doc_texts, _sentence_pairs, max_chunks_per_doc=MAX_CHUNKS_PER_DOC
    )
    with ctx.index_time():
        pairs_vectors = ctx.encode_fn(pairs.texts, "retrieval.passage")
    pair_topmean = topmeansim(Q, pairs_vectors, pairs.owner, n_d, mask=mask)
    bm25 = BM25.fit(ctx.doc_texts).scores(ctx.query_texts)
    bigram = bigram_overlap(ctx.query_texts, ctx.doc_texts)
    heads = top_k_indices(S, CONSENSUS_K, mask)
    head_centroids = np.array([centroid(D, rows) for rows in heads], dtype=np.float32)
    consensus = head_centroids.reshape(n_q, D.shape[1]) @ D.T
    channels = [
        zscore_cols(pair_topmean, mask),
        zscore_rows(bm25, mask),
        zscore_cols(bigram, mask),
        consensus,
    ]
    fused = np.zeros((n_q, n_d), dtype=np.float32)
    for weight, channel in zip(CHANNEL_WEIGHTS, channels, strict=True):
        fused += np.float32(weight) * channel
    if mask is not None:
        fused = np.where(mask, fused, 0.0)
    return fused.astype(np.float32)
