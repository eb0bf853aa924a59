"""Structural program: dense + sent_topmean + pair_topmean + bm25 + anti_hub by a sum of row z-scores, 0 feedback rounds.

Novelty: Relative to g0014, fuses by a sum of row z-scores instead of reciprocal rank fusion; drops feedback round 1; adds TopMeanSim over sentences (row z-scores) [genome dense:row+sent_topmean:row+pair_topmean:minmax+bm25:row+anti_hub:row|zsum|0].
Hypothesis: Fusing the dense cosine S, TopMeanSim over sentences, TopMeanSim over sentence pairs, BM25 and the distance from the candidates' centroid (a hubness correction) by a sum of row z-scores should raise nDCG@10 on every task, because the best-matching part of a long document carries the evidence that one pooled vector dilutes; the best-matching part of a long document carries the evidence that one pooled vector dilutes; BM25 rewards exact rare terms (names, numbers) that embeddings blur; hub documents sit near every candidate set's centre and crowd every ranking.
Parent: g0014
Genome: {"channels": {"dense": "row", "sent_topmean": "row", "pair_topmean": "minmax", "bm25": "row", "anti_hub": "row"}, "fusion": "zsum", "rounds": 0, "refine": "rocchio"}
"""

import numpy as np

from embedding_ttc.programs.primitives.chunking import (
    MAX_CHUNKS_PER_DOC,
    chunk_documents,
    sentence_pairs,
    split_sentences,
)
from embedding_ttc.programs.primitives.late import topmeansim
from embedding_ttc.programs.primitives.lexical import BM25
from embedding_ttc.programs.primitives.scores import candidate_mask, minmax_rows, zscore_rows

NORM_FLOOR = 1e-12


def _sentence_pairs(text):
    """Consecutive sentence pairs of a text."""
    return sentence_pairs(split_sentences(text))


def program(Q, D, S, ctx):
    n_q, n_d = S.shape
    mask = candidate_mask(n_q, n_d, ctx.candidates)
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
    bm25 = BM25.fit(ctx.doc_texts).scores(ctx.query_texts)
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
        zscore_rows(sent_topmean, mask),
        minmax_rows(pair_topmean, mask),
        zscore_rows(bm25, mask),
        zscore_rows(anti_hub, mask),
    ]
    fused = np.zeros((n_q, n_d), dtype=np.float32)
    for channel in channels:
        fused += zscore_rows(channel, mask)
    if mask is not None:
        fused = np.where(mask, fused, 0.0)
    return fused.astype(np.float32)
