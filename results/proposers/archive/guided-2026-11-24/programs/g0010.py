"""Structural program: half_dim + sent_topmean + pair_topmean by reciprocal rank fusion, 0 feedback rounds.

Novelty: Relative to g0003, adds the Matryoshka half-dimension cosine (row z-scores); replaces BM25 with TopMeanSim over sentence pairs; (the chosen change alone repeats a known program) [genome half_dim:row+sent_topmean:row+pair_topmean:row|rrf|0].
Hypothesis: Adding the Matryoshka half-dimension cosine channel (row z-scores) to the retrieval program could potentially raise nDCG@10 on every task because this channel effectively normalizes the relevance of the sentences and documents by reducing noise and improving the alignment of the embedding vectors.
Parent: g0003
Genome: {"channels": {"half_dim": "row", "sent_topmean": "row", "pair_topmean": "row"}, "fusion": "rrf", "rounds": 0, "refine": "rocchio"}
"""

import numpy as np

from embedding_ttc.programs.primitives.chunking import (
    MAX_CHUNKS_PER_DOC,
    chunk_documents,
    sentence_pairs,
    split_sentences,
)
from embedding_ttc.programs.primitives.late import topmeansim
from embedding_ttc.programs.primitives.scores import RRF_K, candidate_mask, rrf, zscore_rows

NORM_FLOOR = 1e-12


def _sentence_pairs(text):
    """Consecutive sentence pairs of a text."""
    return sentence_pairs(split_sentences(text))


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
    pairs = chunk_documents(
        ctx.doc_texts, _sentence_pairs, max_chunks_per_doc=MAX_CHUNKS_PER_DOC
    )
    with ctx.index_time():
        pairs_vectors = ctx.encode_fn(pairs.texts, "retrieval.passage")
    pair_topmean = topmeansim(Q, pairs_vectors, pairs.owner, n_d, mask=mask)
    channels = [
        zscore_rows(half_dim, mask),
        zscore_rows(sent_topmean, mask),
        zscore_rows(pair_topmean, mask),
    ]
    fused = rrf(channels, mask, k=RRF_K)
    if mask is not None:
        fused = np.where(mask, fused, 0.0)
    return fused.astype(np.float32)
