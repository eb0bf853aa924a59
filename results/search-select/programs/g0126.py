"""Structural program: dense + pair_maxsim + bm25 + bigram + consensus by reciprocal rank fusion, 0 feedback rounds.

Novelty: Relative to g0089, fuses by reciprocal rank fusion instead of a convex combination (weight 0.9 shared by the channels after the first); replaces MaxSim over paragraphs with MaxSim over sentence pairs [genome dense:row+pair_maxsim:col+bm25:row+bigram:col+consensus:none|rrf|0].
Hypothesis: Fusing the dense cosine S, MaxSim over sentence pairs, BM25, word-bigram overlap and each document's consensus with the dense top-K by reciprocal rank fusion should raise nDCG@10 on every task, because the best-matching part of a long document carries the evidence that one pooled vector dilutes; BM25 rewards exact rare terms (names, numbers) that embeddings blur; phrases matched in order are stronger evidence than single words; relevant documents resemble each other, so agreement with the dense head is evidence an isolated high cosine lacks.
Parent: g0089
Genome: {"channels": {"dense": "row", "pair_maxsim": "col", "bm25": "row", "bigram": "col", "consensus": "none"}, "fusion": "rrf", "rounds": 0, "refine": "rocchio"}
"""

import numpy as np

from embedding_ttc.programs.primitives.chunking import (
    MAX_CHUNKS_PER_DOC,
    chunk_documents,
    sentence_pairs,
    split_sentences,
)
from embedding_ttc.programs.primitives.feedback import centroid
from embedding_ttc.programs.primitives.late import maxsim
from embedding_ttc.programs.primitives.lexical import BM25, bigram_overlap
from embedding_ttc.programs.primitives.scores import (
    RRF_K,
    candidate_mask,
    rrf,
    top_k_indices,
    zscore_cols,
    zscore_rows,
)

CONSENSUS_K = 10


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
    pair_maxsim = maxsim(Q, pairs_vectors, pairs.owner, n_d, mask=mask)
    bm25 = BM25.fit(ctx.doc_texts).scores(ctx.query_texts)
    bigram = bigram_overlap(ctx.query_texts, ctx.doc_texts)
    heads = top_k_indices(S, CONSENSUS_K, mask)
    head_centroids = np.array([centroid(D, rows) for rows in heads], dtype=np.float32)
    consensus = head_centroids.reshape(n_q, D.shape[1]) @ D.T
    channels = [
        zscore_rows(S, mask),
        zscore_cols(pair_maxsim, mask),
        zscore_rows(bm25, mask),
        zscore_cols(bigram, mask),
        consensus,
    ]
    fused = rrf(channels, mask=mask, k=RRF_K)
    if mask is not None:
        fused = np.where(mask, fused, 0.0)
    return fused.astype(np.float32)
